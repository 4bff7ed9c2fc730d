// @ts-check
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // What .gitignore ignores: build output and the local stack's data directory (its bundles are .mjs).
  { ignores: ['node_modules', 'coverage', 'dist', '.serverless', '.esbuild', '.nlc-data'] },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', '*.mjs', 'cli/bin.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The domain is pure (docs/architecture.md#layout): no I/O, no clock reads, no SDKs. Time is an argument.
    files: ['shared/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'http', 'https', 'net', 'child_process', 'os'],
              message: 'shared/domain is pure: no I/O.',
            },
            {
              group: ['@aws-sdk/*', '@kubernetes/*', '@middy/*', '@aws-lambda-powertools/*'],
              message: 'shared/domain is pure: no SDKs or middleware.',
            },
            {
              group: [
                '../adapters/*',
                '../adapters/**',
                '../../functions/**',
                '../../relay/**',
                '../../local/**',
                '../../cli/**',
              ],
              message: 'Arrows point inward: the domain imports only itself and port types.',
            },
          ],
        },
      ],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: 'The domain takes `now` as an argument.' },
        { object: 'performance', property: 'now', message: 'The domain takes `now` as an argument.' },
        { object: 'Math', property: 'random', message: 'The domain is deterministic.' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'The domain takes `now` as an argument.',
        },
        { selector: "CallExpression[callee.name='setTimeout']", message: 'The domain has no timers.' },
        { selector: "CallExpression[callee.name='setInterval']", message: 'The domain has no timers.' },
        { selector: "MemberExpression[object.name='process']", message: 'The domain reads no environment.' },
        { selector: "CallExpression[callee.name='fetch']", message: 'The domain does no I/O.' },
      ],
    },
  },
  {
    // CommonJS that osls loads with require() (infra/serverless/*.cjs): plain JavaScript, no type information.
    files: ['**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        exports: 'writable',
        __dirname: 'readonly',
        __filename: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
