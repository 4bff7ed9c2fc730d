// infra/serverless/esbuild-plugins.cjs, the plugins every bundle shares (the functions' through
// serverless.yml, the CLI's through scripts/build-cli.ts): a real esbuild bundle of zod, run.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const plugins = createRequire(import.meta.url)('../../../infra/serverless/esbuild-plugins.cjs') as Plugin[];
const dirs: string[] = [];

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** Bundles `contents` (resolved from the repository root), runs it, returns its exports and inputs. */
async function bundleAndRun(contents: string, withPlugins: readonly Plugin[]) {
  const result = await build({
    stdin: { contents, resolveDir: root, loader: 'ts', sourcefile: 'entry.ts' },
    absWorkingDir: root,
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    mainFields: ['module', 'main'],
    metafile: true,
    logLevel: 'silent',
    plugins: [...withPlugins],
  });
  const dir = await mkdtemp(join(tmpdir(), 'nlc-esbuild-plugins-'));
  dirs.push(dir);
  const file = join(dir, 'out.mjs');
  await writeFile(file, result.outputFiles[0]?.text ?? '');
  const exports = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  return { exports, inputs: Object.keys(result.metafile.inputs) };
}

const entry = `
import { z } from 'zod';
export const message = z.string().safeParse(1).error?.issues[0]?.message;
export const locales = Object.keys(z.locales);
`;

describe('noZodLocales', () => {
  it('bundles zod without z.locales, its English messages kept', async () => {
    const { exports, inputs } = await bundleAndRun(entry, plugins);
    expect(inputs.filter((input) => input.includes('node_modules/zod/v4/locales/'))).toEqual([
      'node_modules/zod/v4/locales/en.js',
    ]);
    expect(exports.message).toBe('Invalid input: expected string, received number');
    expect(exports.locales).toEqual([]);
  });

  it('is what leaves them out: without it esbuild bundles every language', async () => {
    const { exports, inputs } = await bundleAndRun(entry, []);
    expect(inputs.filter((input) => input.includes('node_modules/zod/v4/locales/')).length).toBeGreaterThan(
      40,
    );
    expect(exports.locales).toContain('de');
  });
});
