import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', 'node_modules/**', '.nx/**', 'coverage/**', 'migrations/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  { files: ['**/*.spec.ts', '**/*.int-spec.ts', 'test/**/*.ts', 'apps/demo/**/*.ts', 'bench/**/*.ts', 'scripts/**'], rules: { 'no-console': 'off' } },
  { files: ['**/*.js', '**/*.mjs', '**/*.cjs'], languageOptions: { globals: { require: 'readonly', module: 'writable', process: 'readonly', console: 'readonly', __dirname: 'readonly' } } },
  // Plain .js files here are CommonJS entry points and configs: require() is how they import.
  { files: ['**/*.js', '**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
