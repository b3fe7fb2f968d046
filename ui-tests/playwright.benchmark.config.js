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
  timeout: 600 * 1000
};
