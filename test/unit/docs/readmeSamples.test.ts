// scripts/readme-samples.ts: the README's marked samples are what the real commands print.
import { describe, expect, it } from 'vitest';
import {
  checkSamples,
  DEFAULT_FILES,
  findSamples,
  firstDifference,
  parseCommand,
} from '../../../scripts/readme-samples.js';

describe('findSamples', () => {
  it('finds each marked block with its command, content and line', () => {
    const text = [
      '# Title',
      '<!-- sample: nlc --help -->',
      '```',
      '$ npx nlc --help',
      'Usage: nlc',
      '```',
      '```sh',
      'not marked',
      '```',
      '<!-- sample: A=1 nlc config -->',
      '```text',
      '```',
    ].join('\n');
    const samples = findSamples('x.md', text);
    expect(samples.map((s) => [s.line, s.command, s.written])).toEqual([
      [2, 'nlc --help', '$ npx nlc --help\nUsage: nlc\n'],
      [10, 'A=1 nlc config', ''],
    ]);
    const [first] = samples;
    expect(first && text.slice(first.start, first.end)).toBe('$ npx nlc --help\nUsage: nlc\n');
  });

  it('names the file when a block is never closed', () => {
    expect(() => findSamples('x.md', '<!-- sample: nlc --help -->\n```\nno end\n')).toThrow(/x\.md/);
  });
});

describe('parseCommand', () => {
  it.each([
    { command: 'nlc --help', want: { env: {}, args: ['--help'] } },
    {
      command: 'NLC_NODE_EVICTION_RATE=0.05 nlc config --node-monitor-grace-period 40s',
      want: {
        env: { NLC_NODE_EVICTION_RATE: '0.05' },
        args: ['config', '--node-monitor-grace-period', '40s'],
      },
    },
  ])('$command', ({ command, want }) => {
    expect(parseCommand(command)).toEqual(want);
  });

  it('runs only nlc', () => {
    expect(() => parseCommand('rm -rf /')).toThrow(/must run nlc/);
  });
});

describe('firstDifference', () => {
  it('names the first line that differs', () => {
    expect(firstDifference('$ x\na\nb\n', '$ x\na\nc\n')).toBe(
      'line 3 of the block: written "b", the command prints "c"',
    );
  });
});

describe('the marked samples', () => {
  // Runs each marked command (nlc simulate, nlc config, nlc --help). When it fails, the output changed:
  // regenerate with `npx tsx scripts/readme-samples.ts --write` and read the diff.
  it('match what their commands print', { timeout: 180_000 }, async () => {
    const mismatches = await checkSamples(DEFAULT_FILES);
    expect(
      mismatches.map(
        ({ sample, expected }) =>
          `${sample.file}:${sample.line}: ${sample.command}: ${firstDifference(sample.written, expected)}`,
      ),
    ).toEqual([]);
  });
});
