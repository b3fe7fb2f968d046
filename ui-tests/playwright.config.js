/**
 * Galata (Playwright) configuration.
 *
 * The browser is Debian's Chromium (`apt-get install chromium`), never one that
 * a test tool downloads: set CHROMIUM_PATH to use another binary.
 */
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const chromiumLaunchOptions = require('./chromium');
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

// The test server gets a port of its own (VRAM_UI_PORT, else a free one), so
// that the tests never drive a JupyterLab the user started on 8888, and two
// checkouts can run their tests at once. Set in the environment here, so the
// worker processes, which load this file again, use the same port.
if (!process.env.VRAM_UI_PORT) {
  process.env.VRAM_UI_PORT = execFileSync(
    process.env.PYTHON || 'python3',
    [
      '-c',
      'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
    ],
    { encoding: 'utf8' }
  ).trim();
}
const port = process.env.VRAM_UI_PORT;

// The server's log (every request, ~150 lines of expected 404s) goes to a
// file, not between the test results; scripts/test.sh prints it when the
// browser tests fail.
const serverLog =
  process.env.VRAM_UI_SERVER_LOG ||
  path.resolve(__dirname, '..', 'build', 'test-results', 'jupyter-server.log');
fs.mkdirSync(path.dirname(serverLog), { recursive: true });

module.exports = {
  ...baseConfig,
  testDir: './tests',
  // Two specs need a server set up for them, and each runs in a run of its own
  // (a step of scripts/test.sh): death-container.spec.ts needs the kernels
  // under a cgroup memory limit (VRAM_UI_KERNEL_MEMORY_LIMIT, "Galata (cgroup
  // limit)"), gpu-load.spec.ts the stand-in NVML card (VRAM_UI_FAKE_NVML=1,
  // "Galata (stand-in GPU)"), which would change what every other test sees.
  // A run without their setting leaves them out rather than counting them as
  // skipped.
  testIgnore: [
    ...(process.env.VRAM_UI_KERNEL_MEMORY_LIMIT
      ? []
      : ['**/death-container.spec.ts']),
    ...(process.env.VRAM_UI_FAKE_NVML === '1' ? [] : ['**/gpu-load.spec.ts'])
  ],
  timeout: 120 * 1000,
  expect: { timeout: 30 * 1000 },
  retries: process.env.CI ? 1 : 0,
  // One test at a time. Two workers on the 2-vCPU development VM, with other
  // work keeping it busy, made two browsers start JupyterLab at once: Galata's
  // own 15 s wait for the launcher ran out in 4 of 7 tests, and a fifth passed
  // its 120 s timeout (docs/performance.md). kernels.spec.ts also expects its
  // kernel to be the only one the server runs.
  workers: 1,
  reporter: [['list'], ['html', { open: 'never' }]],
  use: {
    ...baseConfig.use,
    baseURL: `http://localhost:${port}`,
    browserName: 'chromium',
    headless: true,
    launchOptions: chromiumLaunchOptions,
    trace: 'retain-on-failure',
    video: 'off'
  },
  webServer: {
    command: `npm start -- --port=${port} --ServerApp.port_retries=0 >> "${serverLog}" 2>&1`,
    url: `http://localhost:${port}/lab`,
    timeout: 180 * 1000,
    reuseExistingServer: false
  }
};
