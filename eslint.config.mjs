// ESLint for the frontend's TypeScript, with the rules of JupyterLab's
// extension template (curly braces always, ===, arrow callbacks, single
// quotes through Prettier) on top of the recommended sets. Formatting is
// Prettier's alone (eslint-config-prettier turns off the rules that would
// disagree with it); `npm run lint:check` runs both.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'lib/**',
      'node_modules/**',
      'python_helper/**',
      'ui-tests/**',
      'build/**',
      '.venv/**',
      'src/**/*.generated.ts',
      'src/features/snippets/defaultSnippets.ts'
    ]
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts'],
    rules: {
      // Wire messages and records are plain data shapes named after what
      // they carry (as the generated protocol types are); interfaces of
      // services and options take JupyterLab's I prefix (see CONTRIBUTING.md).
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-namespace': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { args: 'none', caughtErrors: 'none' }
      ],
      curly: ['error', 'all'],
      eqeqeq: 'error',
      'prefer-arrow-callback': 'error',
      'no-duplicate-imports': 'error'
    }
  },
  {
    // jest's setup file runs in jsdom under Node.
    files: ['src/testing/*.js'],
    languageOptions: {
      globals: { ...globals.browser, ...globals.node, ...globals.jest }
    }
  },
  {
    // Tests and their fixtures may use jest's require-style mocks.
    files: ['src/**/*.spec.ts', 'src/testing/**'],
    rules: {
      '@typescript-eslint/no-require-imports': 'off'
    }
  },
  prettier
);
