const jestJupyterLab = require('@jupyterlab/testing/lib/jest-config');

// ESM-only packages that jest must transform.
const esModules = [
  '@codemirror',
  '@jupyter/ydoc',
  '@jupyter/react-components',
  '@jupyter/web-components',
  '@jupyterlab/',
  '@microsoft',
  'exenv-es6',
  'lib0',
  'marked',
  'nanoid',
  'vscode-ws-jsonrpc',
  'y-protocols',
  'y-websocket',
  'yjs'
].join('|');

const baseConfig = jestJupyterLab(__dirname);

module.exports = {
  ...baseConfig,
  automock: false,
  // Only the sources: the venv, the built labextension and ui-tests hold
  // package.json files that jest's module map would otherwise report as collisions.
  roots: ['<rootDir>/src'],
  collectCoverageFrom: [
    'src/**/*.{ts,tsx}',
    '!src/**/*.d.ts',
    '!src/**/.ipynb_checkpoints/*',
    '!src/kernel/helperBundle.generated.ts'
  ],
  coverageReporters: ['lcov', 'text'],
  reporters: ['default'],
  setupFiles: [...baseConfig.setupFiles, '<rootDir>/src/testing/setup.js'],
  testRegex: 'src/.*/.*.spec.ts[x]?$',
  transform: {
    ...baseConfig.transform,
    // Inline compiler options: tests are excluded from tsconfig.json's build.
    '^.+\\.tsx?$': [
      'ts-jest/legacy',
      {
        tsconfig: {
          allowSyntheticDefaultImports: true,
          esModuleInterop: true,
          jsx: 'react',
          lib: ['DOM', 'DOM.Iterable', 'ES2020'],
          module: 'commonjs',
          moduleResolution: 'node',
          resolveJsonModule: true,
          strict: true,
          skipLibCheck: true,
          target: 'ES2020',
          types: ['jest']
        }
      }
    ]
  },
  transformIgnorePatterns: [`/node_modules/(?!${esModules}).+`]
};
