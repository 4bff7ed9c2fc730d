// Builds the `nlc` CLI into dist/nlc/ (gitignored): cli/main.ts and everything it imports bundled by
// esbuild into ES modules, split into chunks so each command's code loads only when that command runs
// (cli/main.ts imports the commands lazily). cli/bin.mjs runs the result: no TypeScript compilation at
// run time, so `nlc --help` starts in a fraction of a second instead of seconds.
//
// Run by `npm ci` (the `prepare` script), `npm start`, and before the tests (test/globalSetup.ts);
// by hand: `npm run build`. `--if-stale` builds only when a source file changed since the last build.
//
// Dependencies are bundled too: one file parsed beats hundreds of small modules resolved and read
// (bench/cliStart.bench.ts measures it). Packages the CLI only spawns or require()s at run time (osls,
// dynalite) stay where they are.
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { z } from 'zod';

const root = fileURLToPath(new URL('../', import.meta.url));

/** Where the build goes, and the record of what it was built from. */
export const CliOutDir = join(root, 'dist', 'nlc');
export const CliBuildRecord = join(CliOutDir, 'build.json');
/** esbuild's metafile of the build: every output's inputs and imports. */
export const CliMetafile = join(CliOutDir, 'meta.json');

// Also read by cli/bin.mjs (plain JavaScript), which checks the same thing at every start.
const BuildRecordSchema = z.object({
  builtAt: z.number(),
  /** Repository files the bundle was made from (sources, the lockfile), relative to the root. */
  inputs: z.array(z.string()),
});

/**
 * Source files name files next to them with `new URL('../x', import.meta.url)`. Bundled, their code
 * runs from dist/nlc/, so each `import.meta.url` becomes the URL its source file had, computed from the
 * chunk's own location (the checkout can move).
 */
const sourceLocation: Plugin = {
  name: 'source-import-meta-url',
  setup(pluginBuild) {
    pluginBuild.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes(join('node_modules', ''))) return undefined;
      const source = readFileSync(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const fromChunk = relative(CliOutDir, args.path).split('\\').join('/');
      return {
        contents: source.replaceAll(
          'import.meta.url',
          `new URL(${JSON.stringify(fromChunk)}, import.meta.url).href`,
        ),
        loader: 'ts',
      };
    });
  },
};

/**
 * esbuild gives a CommonJS package imported with `import()` only a default export in an ES module
 * bundle, so `const { X } = await import('pkg')` would find X undefined at run time. Lazy loading goes
 * through a module of ours that imports the package statically; this makes the mistake a build error.
 */
const noLazyPackages: Plugin = {
  name: 'no-dynamic-import-of-packages',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind !== 'dynamic-import' || args.path.startsWith('node:')) return undefined;
      // Packages' own lazy imports are theirs to get right (they are tested bundled).
      if (args.importer.includes(join('node_modules', ''))) return undefined;
      return {
        errors: [
          {
            text: `import('${args.path}'): load a package lazily through a module of ours that imports it statically (a dynamic import of a CommonJS package keeps only its default export when bundled)`,
          },
        ],
      };
    });
  },
};

/**
 * The SDK clients' `@aws-sdk/credential-provider-node` becomes cli/lazyCredentials.ts, which loads the
 * chain on first use: a command that signs with fixed credentials (`nlc status` next to a local stack)
 * never loads it. Only the packages' imports are redirected; cli/credentialChain.ts gets the real one.
 */
const lazyCredentialChain: Plugin = {
  name: 'lazy-credential-chain',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^@aws-sdk\/credential-provider-node$/ }, (args) => {
      if (!args.importer.includes(join('node_modules', ''))) return undefined;
      return { path: join(root, 'cli', 'lazyCredentials.ts') };
    });
  },
};

/** The plugins every bundle of the project shares (the functions' too): infra/serverless/esbuild-plugins.cjs. */
const bundlePlugins = createRequire(import.meta.url)('../infra/serverless/esbuild-plugins.cjs') as Plugin[];

/** What is wrong with the current build: undefined when it is fresh. */
export function staleness(): string | undefined {
  let record: z.output<typeof BuildRecordSchema>;
  try {
    record = BuildRecordSchema.parse(JSON.parse(readFileSync(CliBuildRecord, 'utf8')));
  } catch {
    return `no build in ${relative(root, CliOutDir)}`;
  }
  for (const input of record.inputs) {
    try {
      if (statSync(join(root, input)).mtimeMs > record.builtAt) return `${input} changed`;
    } catch {
      return `${input} is gone`;
    }
  }
  return undefined;
}

/**
 * Builds the CLI into dist/nlc/ and returns how long it took and the bundle's size.
 *
 * @example
 * const { ms, bytes } = await buildCli();
 */
export async function buildCli(): Promise<{ ms: number; bytes: number; files: number }> {
  const started = performance.now();
  const builtAt = Date.now();
  // Built beside the current build and swapped in at the end: an `nlc` running meanwhile (another
  // test run) keeps a whole build. Same depth as CliOutDir, so the relative paths below hold for both.
  const staging = `${CliOutDir}.${process.pid}.tmp`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  // A failed build (a source that does not compile) leaves the current build as it was.
  const result = await build({
    absWorkingDir: root,
    entryPoints: { main: 'cli/main.ts' },
    outdir: staging,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    // Packages' ES module builds where they ship one (the AWS SDK clients): esbuild drops what the CLI
    // never calls, which a CommonJS build keeps whole (client-dynamodb: every command and schema).
    mainFields: ['module', 'main'],
    target: 'node20',
    // Node packages written as CommonJS call require(); an ES module has none, so give each chunk one.
    banner: {
      js: "import { createRequire as __nlcCreateRequire } from 'node:module'; const require = __nlcCreateRequire(import.meta.url);",
    },
    // Stack traces that name the TypeScript sources (`nlc --verbose` enables source maps).
    // Less to read and parse at every start (about a tenth off `nlc status`); names are kept, so
    // errors keep their class names and stack traces stay legible.
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    sourcesContent: false,
    metafile: true,
    logLevel: 'warning',
    plugins: [sourceLocation, noLazyPackages, lazyCredentialChain, ...bundlePlugins],
  }).catch(async (error: unknown) => {
    await rm(staging, { recursive: true, force: true });
    throw error;
  });
  const inputs = Object.keys(result.metafile.inputs)
    // Repository files only: not packages, nor a plugin's virtual modules (`namespace:path`).
    .filter((path) => !path.includes('node_modules/') && !path.includes(':'))
    .sort();
  const record: z.input<typeof BuildRecordSchema> = {
    builtAt,
    inputs: [
      ...inputs,
      'package-lock.json',
      relative(root, fileURLToPath(import.meta.url)),
      'infra/serverless/esbuild-plugins.cjs',
    ],
  };
  await writeFile(join(staging, 'build.json'), `${JSON.stringify(record, null, 1)}\n`);
  // What each output holds and loads (test/unit/cli/main.test.ts checks what `nlc config` loads).
  await writeFile(join(staging, 'meta.json'), JSON.stringify(result.metafile));
  const previous = `${CliOutDir}.${process.pid}.old`;
  await rename(CliOutDir, previous).catch(() => undefined);
  await rename(staging, CliOutDir);
  await rm(previous, { recursive: true, force: true });
  const outputs = Object.entries(result.metafile.outputs).filter(([path]) => path.endsWith('.js'));
  return {
    ms: Math.round(performance.now() - started),
    bytes: outputs.reduce((sum, [, output]) => sum + output.bytes, 0),
    files: outputs.length,
  };
}

/** Builds when needed: the reason it built, or undefined when the build was fresh. */
export async function buildCliIfStale(): Promise<string | undefined> {
  const reason = staleness();
  if (reason !== undefined) await buildCli();
  return reason;
}

// `tsx scripts/build-cli.ts [--if-stale]`
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--if-stale') && staleness() === undefined) process.exit(0);
  const { ms, bytes, files } = await buildCli();
  const shown = relative(process.cwd(), CliOutDir) || '.';
  process.stderr.write(
    `nlc: built ${shown}/ (${files} files, ${(bytes / 1024 / 1024).toFixed(1)} MiB) in ${(ms / 1000).toFixed(1)} s\n`,
  );
}
