// @ts-check
// Import rules for product code, checked by `npm run lint` (lint:deps) and by
// test/unit/architecture/importCycles.test.ts: no circles, and the layering. Arrows point inward:
//   shared/domain  ← shared/app  ← shared/adapters, functions/, relay/, cli/, local/
// The domain imports only itself and the ports (types); services take ports, not adapters; nothing in
// shared/ imports the outer folders; cli/ may start local/ (`nlc start`, `nlc simulate`), never the
// reverse. docs/architecture.md, "Layout".

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'Modules in a circle can be neither understood, tested nor split one at a time. Type-only and ' +
        'dynamic imports count: they create no load-time cycle, but they tie the modules together all ' +
        'the same (a port that names an app type depends on the app).',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-imports-domain-and-ports',
      comment: 'The domain is pure upstream semantics: it imports only itself and port types.',
      severity: 'error',
      from: { path: '^shared/domain/' },
      to: { pathNot: ['^shared/domain/', '^shared/ports/'] },
    },
    {
      name: 'app-not-adapters',
      comment: 'Application services take ports; adapters are wired in by the shells.',
      severity: 'error',
      from: { path: '^shared/app/' },
      to: { path: '^shared/adapters/' },
    },
    {
      name: 'shared-not-outer',
      comment:
        'shared/ serves the functions, the relay, the CLI and the local system; it imports none of them.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^(functions|relay|cli|local)/' },
    },
    {
      name: 'local-not-cli',
      comment: 'The CLI starts the local stack and the simulator; they do not reach back into the CLI.',
      severity: 'error',
      from: { path: '^local/' },
      to: { path: '^cli/' },
    },
    {
      name: 'functions-relay-apart',
      comment:
        'The Lambda shells and the relay are deployed apart: neither imports the other, the CLI or local/.',
      severity: 'error',
      from: { path: '^(functions|relay)/' },
      to: { path: '^(cli|local)/' },
    },
  ],
  options: {
    // Without it, `import type` lines are compiled away before the graph is built, and a circle made
    // of type-only imports (a port naming an app-layer type) would go unseen.
    tsPreCompilationDeps: true,
    // Resolves the `.js` specifiers of NodeNext ESM to their `.ts` sources.
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|coverage|test|bench)/' },
    // Only the rules above are evaluated; skips the work for dependency attributes nothing checks.
    skipAnalysisNotInRules: true,
  },
};
