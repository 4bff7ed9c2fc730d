#!/usr/bin/env node
// @ts-check
// The `nlc` executable (package.json "bin"): runs the CLI as built into dist/nlc/ by
// scripts/build-cli.ts (`npm ci` builds it, so does `npm start`; by hand `npm run build`). No TypeScript
// is compiled here: starting fast is the point. The exit code is main()'s; nothing calls process.exit
// on the normal path, so pending output is flushed before the process ends.
import { existsSync, readFileSync, statSync } from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';

const root = new URL('../', import.meta.url);
const built = new URL('dist/nlc/main.js', root);
const record = new URL('dist/nlc/build.json', root);

// Every AWS SDK v3 client warns on Node 20 that future versions need Node 22 (docs/deploy.md): noise
// for an operator reading a table.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// `nlc status | head`: the reader went away; stop quietly instead of crashing on EPIPE.
process.stdout.on('error', (/** @type {NodeJS.ErrnoException} */ error) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

/**
 * @param {string} text
 * @returns {{ builtAt: number, inputs: string[] }}
 */
function parseRecord(text) {
  /** @type {unknown} */
  const value = JSON.parse(text);
  if (typeof value !== 'object' || value === null) throw new TypeError('not a build record');
  const builtAt = 'builtAt' in value ? value.builtAt : undefined;
  const inputs = 'inputs' in value ? value.inputs : undefined;
  if (typeof builtAt !== 'number' || !Array.isArray(inputs)) throw new TypeError('not a build record');
  return { builtAt, inputs: inputs.map(String) };
}

/**
 * The first source file changed since the build, if any: a stale build runs, with a warning. A few
 * hundred stat calls, about a millisecond.
 * @returns {string | undefined}
 */
function changedSince() {
  try {
    const { builtAt, inputs } = parseRecord(readFileSync(record, 'utf8'));
    for (const input of inputs) {
      if (statSync(new URL(input, root)).mtimeMs > builtAt) return input;
    }
  } catch {
    return 'the build record';
  }
  return undefined;
}

/**
 * @param {unknown} value
 * @returns {value is { main: (args: readonly string[]) => Promise<number> }}
 */
function isCli(value) {
  return typeof value === 'object' && value !== null && typeof Reflect.get(value, 'main') === 'function';
}

if (!existsSync(built)) {
  process.stderr.write(
    'error: nlc is not built (no dist/nlc/main.js): run `npm run build` (npm ci does it too)\n',
  );
  process.exitCode = 1;
} else {
  const changed = changedSince();
  if (changed !== undefined) {
    process.stderr.write(
      `nlc: warning: ${changed} changed since the build in dist/nlc/; running the old build (\`npm run build\` updates it)\n`,
    );
  }
  const args = process.argv.slice(2);
  // Stack traces that name the TypeScript sources, only when asked for: source maps cost start-up
  // time, and only modules loaded after this call get them.
  if (args.includes('--verbose')) process.setSourceMapsEnabled(true);
  /** @type {unknown} */
  const cli = await import(built.href);
  if (!isCli(cli)) throw new TypeError(`${built.pathname} exports no main(): run \`npm run build\``);
  process.exitCode = await cli.main(args);
}
