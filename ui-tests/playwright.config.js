/**
 * Galata (Playwright) configuration.
 *
 * The browser is Debian's Chromium (`apt-get install chromium`), never one that
 * a test tool downloads: set CHROMIUM_PATH to use another binary.
 */
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run'
];

module.exports = {
  ...baseConfig,
  testDir: './tests',
  timeout: 120 * 1000,
  expect: { timeout: 30 * 1000 },
  retries: process.env.CI ? 1 : 0,
  workers: 1,
  reporter: [['list'], ['html', { open: 'never' }]],
  use: {
    ...baseConfig.use,
    browserName: 'chromium',
    headless: true,
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: chromiumArgs
    },
    trace: 'retain-on-failure',
    video: 'off'
  },
  webServer: {
    command: 'npm start',
    url: 'http://localhost:8888/lab',
    timeout: 180 * 1000,
    reuseExistingServer: !process.env.CI
  }
};
