/**
 * Playwright configuration of the smoke journeys (scripts/smoke-journeys.sh
 * starts the servers and passes them in VRAM_COMPAT_TARGETS): one project per
 * JupyterLab / Notebook 7 / kernel gateway target, in Debian's Chromium.
 * Plain Playwright, not Galata: Galata is tied to one JupyterLab version.
 */
const path = require('path');

const targets = JSON.parse(process.env.VRAM_COMPAT_TARGETS || '[]');
if (targets.length === 0) {
  throw new Error(
    'VRAM_COMPAT_TARGETS is empty: run scripts/smoke-journeys.sh'
  );
}

module.exports = {
  testDir: __dirname,
  testMatch: 'journey.spec.ts',
  outputDir: path.resolve(__dirname, '..', 'test-results', 'compat'),
  timeout: 180 * 1000,
  expect: { timeout: 60 * 1000 },
  retries: process.env.CI ? 1 : 0,
  // Two at a time: the development VM has two cores, and each journey has a
  // kernel and a browser page besides the servers.
  workers: 2,
  fullyParallel: true,
  // The list for the log; the JSON for scripts/summarize-tests.py.
  reporter: [
    ['list'],
    [
      'json',
      {
        outputFile:
          process.env.VRAM_COMPAT_JSON ||
          path.resolve(
            __dirname,
            '..',
            '..',
            'build',
            'test-results',
            'smoke-journeys.json'
          )
      }
    ]
  ],
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: require('../chromium'),
    trace: 'retain-on-failure',
    video: 'off'
  },
  projects: targets.map(target => ({
    name: target.name,
    use: { baseURL: target.baseURL },
    metadata: target
  }))
};
