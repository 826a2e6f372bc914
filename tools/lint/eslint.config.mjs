// ESLint (typescript-eslint, flat config) over every package, app, test and benchmark. Run from the
// repository root: `npm run lint`. Syntax-level rules only: type information would need the TypeScript 5
// compiler to understand TypeScript 7's project setup, and `tsc -b` already checks types.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/dist/**', '**/generated/**', 'tools/**', '.devnet/**', 'coverage/**', '**/*.js', '**/*.mjs', '**/*.cjs'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    files: ['**/*.ts'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'module' },
    rules: {
      // unused bindings are errors, except ones named to be ignored (`_`-prefixed), e.g. a destructured field left out on purpose
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', destructuredArrayIgnorePattern: '^_' }],
      // `as unknown as T` at the boundaries with untyped libraries is deliberate and commented where used
      '@typescript-eslint/no-explicit-any': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
      eqeqeq: ['error', 'smart'],
    },
  },
);
