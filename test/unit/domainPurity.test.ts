// shared/domain is the pure core (docs/architecture.md#layout): no I/O, no clock reads, no SDKs; time is an
// argument. ESLint enforces this while editing; this test enforces it in `npm test` even if lint config
// drifts.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const domainDir = join(import.meta.dirname, '..', '..', 'shared', 'domain');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const forbidden: { pattern: RegExp; why: string }[] = [
  { pattern: /from\s+['"]node:/, why: 'imports a node: built-in (I/O)' },
  { pattern: /from\s+['"](fs|http|https|net|child_process|os|path)['"]/, why: 'imports a Node I/O module' },
  {
    pattern: /from\s+['"]@(aws-sdk|kubernetes|middy|aws-lambda-powertools)\//,
    why: 'imports an SDK or middleware',
  },
  { pattern: /from\s+['"]\.\.\/adapters\//, why: 'imports an adapter (arrows point inward)' },
  { pattern: /\bDate\.now\s*\(/, why: 'reads the clock' },
  { pattern: /\bnew Date\(\s*\)/, why: 'reads the clock' },
  { pattern: /\bperformance\.now\s*\(/, why: 'reads the clock' },
  { pattern: /\bMath\.random\s*\(/, why: 'is not deterministic' },
  { pattern: /\bprocess\./, why: 'reads the process environment' },
  { pattern: /\bset(Timeout|Interval|Immediate)\s*\(/, why: 'starts a timer' },
];

describe('shared/domain purity', () => {
  const files = sourceFiles(domainDir);

  it('has source files to check', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  it.each(files.map((f) => ({ file: relative(domainDir, f), path: f })))(
    '$file does no I/O and reads no clock',
    ({ path }) => {
      const text = readFileSync(path, 'utf8');
      const violations = forbidden.filter(({ pattern }) => pattern.test(text)).map(({ why }) => why);
      expect(violations).toEqual([]);
    },
  );
});
