// No import circles in product code, and no arrow against the layering: the rules live in
// .dependency-cruiser.mjs, so the test and `npm run lint:deps` check the same thing. Type-only and dynamic imports count (see the rule's
// comment); the fixtures prove the configuration still sees both kinds.
import { join } from 'node:path';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const productDirs = ['shared', 'functions', 'relay', 'local', 'cli', 'infra', 'scripts'];

/**
 * Circles that other changes in flight are breaking, written as `circleName` prints them. Empty it as
 * they land: an entry that no longer matches a circle fails the test, so the list only shrinks.
 */
const knownCircles: readonly string[] = [];

async function cruiseFor(paths: string[], overrides: ICruiseOptions = {}): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(join(root, '.dependency-cruiser.mjs'));
  const tsConfig = extractTSConfig(join(root, 'tsconfig.json'));
  const result = await cruise(paths, { ...options, baseDir: root, ...overrides }, undefined, { tsConfig });
  if (typeof result.output === 'string') throw new Error('dependency-cruiser returned text, not a result');
  return result.output;
}

/** A circle as `a → b → a`, started at its alphabetically first module so each circle has one name. */
function circleName(modules: readonly string[]): string {
  const first = modules.indexOf([...modules].sort()[0] ?? '');
  const rotated = [...modules.slice(first), ...modules.slice(0, first)];
  return [...rotated, rotated[0]].join(' → ');
}

/** Each distinct circle found (dependency-cruiser reports one per dependency on it). */
function circles(result: ICruiseResult): string[] {
  const names = result.summary.violations
    .filter((v) => v.rule.name === 'no-circular' && v.cycle !== undefined)
    .map((v) => circleName([v.from, ...(v.cycle ?? []).map((m) => m.name)].slice(0, -1)));
  return [...new Set(names)].sort();
}

describe('import circles', () => {
  let product: ICruiseResult;

  beforeAll(async () => {
    product = await cruiseFor(productDirs);
  });

  it('cruises the product code with the TypeScript sources resolved', () => {
    const modules = product.modules.map((m) => m.source);
    expect(modules).toContain('shared/app/decisions.ts');
    expect(modules).toContain('cli/main.ts');
    // `.js` specifiers resolved to `.ts` files: nothing local left unresolved.
    const unresolved = product.modules.flatMap((m) =>
      m.dependencies
        .filter((d) => d.couldNotResolve && d.module.startsWith('.'))
        .map((d) => `${m.source} → ${d.module}`),
    );
    expect(unresolved).toEqual([]);
  });

  it('finds no circle in product code', () => {
    const found = circles(product).filter((c) => !knownCircles.includes(c));
    expect(found, `import circles:\n${found.join('\n')}`).toEqual([]);
  });

  it('breaks none of the layering rules (domain, app, shared, local, functions and relay)', () => {
    const broken = product.summary.violations
      .filter((v) => v.rule.name !== 'no-circular')
      .map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
    expect(broken).toEqual([]);
    // The rules are there to be broken: the configuration names each of them.
    const names = product.summary.ruleSetUsed?.forbidden?.map((r) => r.name);
    expect(names).toEqual([
      'no-circular',
      'domain-imports-domain-and-ports',
      'app-not-adapters',
      'shared-not-outer',
      'local-not-cli',
      'functions-relay-apart',
    ]);
  });

  it('lists in knownCircles only circles that still exist', () => {
    const found = circles(product);
    const fixed = knownCircles.filter((c) => !found.includes(c));
    expect(fixed, `no longer circles, remove them from knownCircles:\n${fixed.join('\n')}`).toEqual([]);
  });

  it.each([
    { kind: 'type-only imports', dir: 'typeOnlyCircle', modules: ['app.ts', 'port.ts'] },
    { kind: 'a dynamic import', dir: 'dynamicCircle', modules: ['command.ts', 'main.ts'] },
  ])('sees a circle made of $kind', async ({ dir, modules }) => {
    const fixture = `test/unit/architecture/fixtures/${dir}`;
    const result = await cruiseFor([fixture], { exclude: { path: '^node_modules/' } });
    expect(circles(result)).toEqual([circleName(modules.map((m) => `${fixture}/${m}`))]);
  });
});
