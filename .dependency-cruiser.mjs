// @ts-check
// Import rules for product code, checked by test/unit/architecture/importCycles.test.ts (and by hand:
// `npx depcruise --config .dependency-cruiser.mjs shared functions relay local cli infra scripts`).

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
  ],
  options: {
    // Without it, `import type` lines are compiled away before the graph is built, and a circle made
    // of type-only imports (a port naming an app-layer type) would go unseen.
    tsPreCompilationDeps: true,
    // Resolves the `.js` specifiers of NodeNext ESM to their `.ts` sources.
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|coverage|test|bench)/' },
    // Only the rule above is evaluated; skips the work for dependency attributes nothing checks.
    skipAnalysisNotInRules: true,
  },
};
