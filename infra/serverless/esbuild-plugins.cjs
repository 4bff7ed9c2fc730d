// esbuild plugins for the project's bundles: the functions' (serverless.yml custom.esbuild.plugins, read
// by serverless-esbuild) and the `nlc` CLI's (scripts/build-cli.ts). One list, so every bundle leaves
// out the same dead weight.
'use strict';

/**
 * zod's `z.locales` (its error messages in 50 languages, 297 KB: half of zod in a bundle) becomes an
 * empty namespace. esbuild keeps every module behind zod's `export * as locales` even when nothing reads
 * it, so each cold start would parse them. English, the language zod configures itself with, comes from
 * its own module and stays; nothing in this project reads `z.locales`.
 * @type {import('esbuild').Plugin}
 */
const noZodLocales = {
  name: 'no-zod-locales',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)) return undefined;
      return { path: 'zod-locales', namespace: 'no-zod-locales' };
    });
    build.onLoad({ filter: /.*/, namespace: 'no-zod-locales' }, () => ({
      contents: 'export {};',
      loader: 'js',
    }));
  },
};

module.exports = [noZodLocales];
