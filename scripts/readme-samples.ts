// The README's sample outputs come from the real commands. A fenced block preceded by
//
//   <!-- sample: nlc simulate examples/scenarios/single-node-failure.yaml -->
//
// holds `$ npx nlc …` and then what that command prints on stdout (stderr carries timings and
// warnings, which change from run to run; it is shown only when stdout is empty). `VAR=value` words
// before `nlc` set environment variables. Only deterministic commands belong here: the samples that
// need a running stack (`nlc status`, `nlc explain`, the live view) are pasted from a real run and not
// marked.
//
// CLI: npx tsx scripts/readme-samples.ts [--write] [file.md ...]   (default: README.md and the docs)
//   without --write: exit 1 and name every block that differs from its command's output;
//   with --write: rewrite those blocks.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { z } from 'zod';

const root = resolve(import.meta.dirname, '..');
const run = promisify(execFile);

export const DEFAULT_FILES = ['README.md', 'docs/configuration.md', 'docs/simulate.md'];

export interface Sample {
  readonly file: string;
  /** 1-based line of the `<!-- sample: … -->` marker. */
  readonly line: number;
  readonly command: string;
  /** The block's content as written. */
  readonly written: string;
  /** Offsets of the block's content in the file, for --write. */
  readonly start: number;
  readonly end: number;
}

const MARKER = /<!--\s*sample:\s*(.+?)\s*-->\r?\n```[^\n]*\n/g;

/** The marked blocks of one Markdown text. */
export function findSamples(file: string, text: string): Sample[] {
  const samples: Sample[] = [];
  for (const m of text.matchAll(MARKER)) {
    const start = m.index + m[0].length;
    const close = text.indexOf('```', start);
    if (close < 0) throw new Error(`${file}: the sample block after "${m[1] ?? ''}" is never closed`);
    samples.push({
      file,
      line: text.slice(0, m.index).split('\n').length,
      command: m[1] ?? '',
      written: text.slice(start, close),
      start,
      end: close,
    });
  }
  return samples;
}

const Command = z.object({
  env: z.record(z.string(), z.string()),
  args: z.array(z.string()),
});
type Command = z.infer<typeof Command>;

/** `A=1 B=2 nlc simulate x.yaml` → env and the arguments after `nlc`. No quoting: samples need none. */
export function parseCommand(command: string): Command {
  const words = command.split(/\s+/).filter((w) => w !== '');
  const env: Record<string, string> = {};
  while (words[0] !== undefined && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const word = words.shift() ?? '';
    const eq = word.indexOf('=');
    env[word.slice(0, eq)] = word.slice(eq + 1);
  }
  if (words.shift() !== 'nlc') throw new Error(`sample command must run nlc: ${command}`);
  return Command.parse({ env, args: words });
}

/** What the block should hold: the command line as typed, then its output. */
export async function expectedBlock(command: string): Promise<string> {
  const { env, args } = parseCommand(command);
  const pkg = z
    .object({ bin: z.object({ nlc: z.string() }) })
    .parse(JSON.parse(await readFile(join(root, 'package.json'), 'utf8')));
  let stdout: string;
  let stderr: string;
  try {
    ({ stdout, stderr } = await run(process.execPath, [join(root, pkg.bin.nlc), ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1', ...env },
      maxBuffer: 16 * 1024 * 1024,
    }));
  } catch (error) {
    // A sample may show a failure (exit 2 naming the bad flag): its output is the sample.
    const failed = z.object({ stdout: z.string(), stderr: z.string() }).parse(error);
    ({ stdout, stderr } = failed);
  }
  const shown = stdout.trim() === '' ? stderr : stdout;
  const typed = [...Object.entries(env).map(([k, v]) => `${k}=${v}`), 'npx nlc', ...args].join(' ');
  return `$ ${typed}\n${shown.replace(/\s+$/, '')}\n`;
}

export interface Mismatch {
  readonly sample: Sample;
  readonly expected: string;
}

/** Every marked block of `files` whose content differs from its command's output. */
export async function checkSamples(files: readonly string[]): Promise<Mismatch[]> {
  const mismatches: Mismatch[] = [];
  for (const file of files) {
    const text = await readFile(join(root, file), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    for (const sample of findSamples(file, text)) {
      const expected = await expectedBlock(sample.command);
      if (expected !== sample.written) mismatches.push({ sample, expected });
    }
  }
  return mismatches;
}

/** The first line where two texts differ, for a message a person can act on. */
export function firstDifference(written: string, expected: string): string {
  const a = written.split('\n');
  const b = expected.split('\n');
  const i = a.findIndex((line, n) => line !== b[n]);
  const at = i < 0 ? a.length : i;
  return `line ${at + 1} of the block: written ${JSON.stringify(a[at] ?? '')}, the command prints ${JSON.stringify(b[at] ?? '')}`;
}

export async function main(argv: readonly string[]): Promise<number> {
  const write = argv.includes('--write');
  const listed = argv.filter((a) => a !== '--write');
  const files = listed.length > 0 ? listed : DEFAULT_FILES;
  const mismatches = await checkSamples(files);
  if (!write) {
    for (const { sample, expected } of mismatches) {
      console.error(
        `${sample.file}:${sample.line}: "${sample.command}": ${firstDifference(sample.written, expected)}`,
      );
    }
    if (mismatches.length > 0) console.error('Rewrite them with: npx tsx scripts/readme-samples.ts --write');
    return mismatches.length > 0 ? 1 : 0;
  }
  for (const file of new Set(mismatches.map((m) => m.sample.file))) {
    let text = await readFile(join(root, file), 'utf8');
    // From the end, so earlier offsets stay valid.
    for (const { sample, expected } of mismatches.filter((m) => m.sample.file === file).reverse()) {
      text = text.slice(0, sample.start) + expected + text.slice(sample.end);
    }
    await writeFile(join(root, file), text);
    console.log(`${file}: ${mismatches.filter((m) => m.sample.file === file).length} sample(s) rewritten`);
  }
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv.slice(2));
}
