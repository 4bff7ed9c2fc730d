import { defineConfig } from 'vitest/config';

// Benchmarks are separate from tests: machines here are shared and noisy, so numbers are reported,
// never asserted (docs/architecture.md#budgets).
export default defineConfig({
  test: { benchmark: { include: ['bench/**/*.bench.ts'] } },
});
