#!/usr/bin/env node
// The `nlc` executable (package.json "bin"): runs cli/main.ts through tsx's ESM loader, so the CLI
// needs no build step. tsx is therefore a runtime dependency. The exit code is main()'s; nothing
// calls process.exit, so pending output is flushed before the process ends.
import process from 'node:process';
import { register } from 'tsx/esm/api';

// Every AWS SDK v3 client warns on Node 20 that future versions need Node 22 (docs/deploy.md): noise
// for an operator reading a table.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// `nlc status | head`: the reader went away; stop quietly instead of crashing on EPIPE.
process.stdout.on('error', (/** @type {NodeJS.ErrnoException} */ error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

register();
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));
