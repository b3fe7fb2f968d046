/**
 * Benchmarks in the real browser: they print figures, they do not pass or
 * fail on timing (run with `npm run benchmark`).
 */
const testConfig = require('./playwright.config');

module.exports = {
  ...testConfig,
  testDir: './benchmarks',
  testMatch: '**/*.bench.ts',
  retries: 0,
  // A trace of a 30-minute soak would be hundreds of megabytes.
  use: { ...testConfig.use, trace: 'off', video: 'off' },
  timeout: 600 * 1000
};
