/**
 * The frontend's layering, checked by dependency-cruiser (`npm run lint:deps`):
 * no import circle anywhere; the core folders (protocol, text, settings,
 * model, kernel, storage, monitor, ui) never import a feature, the sidebar or
 * the top level (index.ts, tokens.ts), and the sidebar, which the features
 * add their tabs to, imports the core only, so that a feature can be read,
 * changed or switched off without touching them. CONTRIBUTING.md draws the
 * layers.
 */
const CORE = '^src/(protocol|text|settings|model|kernel|storage|monitor|ui)/';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import circle: one module cannot be understood or loaded without the other.',
      from: {},
      to: { circular: true }
    },
    {
      name: 'core-not-to-features',
      severity: 'error',
      comment: 'The core serves the features and never depends on one.',
      from: { path: CORE, pathNot: '\\.spec\\.ts$' },
      to: { path: '^src/(features|sidebar)/|^src/(index|tokens)\\.ts$' }
    },
    {
      name: 'sidebar-knows-no-feature',
      severity: 'error',
      comment:
        'The sidebar shows what the features register; it never imports one.',
      from: { path: '^src/sidebar/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^src/features/|^src/(index|tokens)\\.ts$' }
    },
    {
      name: 'protocol-reads-only-the-wire',
      severity: 'error',
      comment: 'The wire format and its readers depend on nothing of the app.',
      from: { path: '^src/protocol/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^src/', pathNot: '^src/protocol/|^src/testing/' }
    },
    {
      name: 'no-test-code-in-the-app',
      severity: 'error',
      comment: 'Fixtures and fakes are for specs only.',
      from: { path: '^src/', pathNot: '(\\.spec\\.ts$|^src/testing/)' },
      to: { path: '^src/testing/|\\.spec\\.ts$' }
    }
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.generated\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' }
  }
};
