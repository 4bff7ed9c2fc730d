// The repository stands on its own: no file cites a document that is not in it, and every relative
// link and every `docs/….md#anchor` reference points at a file (and heading) that exists. A failure
// names file:line. The design and upstream notes live in docs/architecture.md and docs/upstream.md.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..', '..');
const self = relative(root, import.meta.filename)
  .split(sep)
  .join('/');

/** Tracked files and new ones not ignored: what a clone (or the next commit) holds. */
function repoFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const binary = new Set(['.png', '.jpg', '.jpeg', '.gif', '.ico', '.zip', '.gz', '.tgz', '.woff', '.woff2']);
  return out
    .split('\0')
    .filter((f) => f !== '' && !f.startsWith('node_modules/') && f !== 'package-lock.json' && f !== self)
    .filter(
      (f) =>
        !binary.has(extname(f).toLowerCase()) &&
        existsSync(join(root, f)) &&
        statSync(join(root, f)).isFile(),
    );
}

const files = repoFiles();
const texts = new Map(files.map((f) => [f, readFileSync(join(root, f), 'utf8')]));

// The team's background notes were never part of the repository. Built from pieces so that this file
// does not match itself.
const outside = ['DESIGN', 'UPSTREAM', 'SCENARIOS', 'TOOLCHAIN', 'STYLE'];
const citations: { pattern: RegExp; what: string }[] = [
  ...outside.map((name) => ({
    pattern: new RegExp(`\\b${name}(\\.md)?\\s*§|\\b${name}\\.md\\b`),
    what: `cites ${name}, a document outside the repository`,
  })),
  {
    pattern: new RegExp(`\\b(${['SCENARIOS', 'TOOLCHAIN', 'STYLE'].join('|')})\\b`),
    what: 'cites a document outside the repository',
  },
  { pattern: /(?<!RFC \d+ )§\s?\d+\.\d/, what: 'cites a numbered section of notes outside the repository' },
  { pattern: /\/work\/shared\b/, what: 'points into a directory outside the repository' },
];

function lines(file: string): string[] {
  return (texts.get(file) ?? '').split('\n');
}

/**
 * Relative paths that leave the repository towards a document: `../x.md`, or `../shared/…` seen from a
 * place where no `shared/` of ours is (the team's notes sat in a `shared` folder beside the checkout).
 * Module patterns such as eslint's `'../adapters/*'` are not paths from the file and are not matched.
 */
function escapes(file: string, line: string): string[] {
  return [...line.matchAll(/(?<![\w.])((?:\.\.\/)+)([\w@.-]+(?:\/[\w@.-]+)*)/g)]
    .map((m) => ({ path: (m[1] ?? '') + (m[2] ?? ''), first: (m[2] ?? '').split('/')[0] ?? '' }))
    .filter(({ path, first }) => {
      const target = relative(root, resolve(root, dirname(file), path));
      return target.startsWith('..') && (path.endsWith('.md') || first === 'shared');
    })
    .map(({ path }) => path);
}

/** GitHub's heading anchors, plus explicit `id`/`name` anchors. */
const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  const cached = anchorCache.get(file);
  if (cached) return cached;
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(join(root, file), 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    for (const m of line.matchAll(/\b(?:id|name)="([^"]+)"/g)) anchors.add(m[1] ?? '');
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = (heading[1] ?? '')
      .toLowerCase()
      .replace(/<[^>]*>/g, '')
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

/** Problem with a link to `target` (a path relative to the repository root, maybe with #anchor). */
function checkTarget(target: string): string | undefined {
  const [path = '', anchor] = target.split('#', 2);
  if (
    path !== '' &&
    (relative(root, resolve(root, path)).startsWith('..') || !existsSync(join(root, path)))
  ) {
    return `links to ${path}, which does not exist`;
  }
  if (
    anchor === undefined ||
    anchor === '' ||
    !path.endsWith('.md') ||
    statSync(join(root, path)).isDirectory()
  ) {
    return undefined;
  }
  return anchorsOf(path).has(anchor) ? undefined : `links to ${path}#${anchor}, which has no such heading`;
}

describe('the repository is self-contained', () => {
  it('has files to check', () => {
    expect(files.length).toBeGreaterThan(100);
  });

  it('cites no document outside the repository', () => {
    const problems: string[] = [];
    for (const file of files) {
      lines(file).forEach((line, i) => {
        const cited = citations.find(({ pattern }) => pattern.test(line));
        if (cited) problems.push(`${file}:${i + 1}: ${cited.what}: ${line.trim()}`);
        for (const path of escapes(file, line)) {
          problems.push(`${file}:${i + 1}: ${path} leaves the repository`);
        }
      });
    }
    expect(problems).toEqual([]);
  });

  it('has no relative Markdown link to a missing file or heading', () => {
    const problems: string[] = [];
    for (const file of files.filter((f) => f.endsWith('.md'))) {
      let fenced = false;
      lines(file).forEach((line, i) => {
        if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
        if (fenced) return;
        for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
          const link = m[1] ?? '';
          if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:
          const target = link.startsWith('#')
            ? `${file}${link}`
            : relative(root, resolve(root, dirname(file), link));
          const problem = checkTarget(target.split(sep).join('/'));
          if (problem) problems.push(`${file}:${i + 1}: ${problem}`);
        }
      });
    }
    expect(problems).toEqual([]);
  });

  it('points every docs/….md reference at a file and heading that exist', () => {
    const problems: string[] = [];
    for (const file of files) {
      lines(file).forEach((line, i) => {
        for (const m of line.matchAll(/(?<![\w/.-])(docs\/[\w/-]+\.md)(#[\w-]+)?/g)) {
          const problem = checkTarget(`${m[1] ?? ''}${m[2] ?? ''}`);
          if (problem) problems.push(`${file}:${i + 1}: ${problem}`);
        }
      });
    }
    expect(problems).toEqual([]);
  });
});
