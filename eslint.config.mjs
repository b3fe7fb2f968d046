// ESLint for the frontend's TypeScript, with the rules of JupyterLab's
// extension template (curly braces always, ===, arrow callbacks, single
// quotes through Prettier) on top of the recommended sets. Formatting is
// Prettier's alone (eslint-config-prettier turns off the rules that would
// disagree with it); `npm run lint:check` runs both.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import jsdoc from 'eslint-plugin-jsdoc';
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
    // Every exported symbol of the app code carries a doc comment that says
    // what it is, so that a reader of any module (and of the declarations in
    // lib/) learns a name's meaning without reading its body. Only presence
    // is checked; the wording is the reviewer's job.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.spec.ts', 'src/testing/**'],
    plugins: { jsdoc },
    rules: {
      'jsdoc/require-jsdoc': [
        'error',
        {
          // Only the declarations that a module exports (at its top level
          // or from an exported namespace); require's defaults would also
          // ask for one on every function declaration, exported or not.
          require: { FunctionDeclaration: false },
          // Its fix writes an empty comment, which `npm run lint` would then
          // add silently in place of the sentence the rule asks for.
          enableFixer: false,
          contexts: [
            'ExportNamedDeclaration[declaration.type="ClassDeclaration"]',
            'ExportNamedDeclaration[declaration.type="FunctionDeclaration"]',
            'ExportNamedDeclaration[declaration.type="TSDeclareFunction"]',
            'ExportNamedDeclaration[declaration.type="TSEnumDeclaration"]',
            'ExportNamedDeclaration[declaration.type="TSInterfaceDeclaration"]',
            'ExportNamedDeclaration[declaration.type="TSModuleDeclaration"]',
            'ExportNamedDeclaration[declaration.type="TSTypeAliasDeclaration"]',
            'ExportNamedDeclaration[declaration.type="VariableDeclaration"]',
            'Program > ExportDefaultDeclaration'
          ]
        }
      ]
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
