/**
 * How every browser test here starts Chromium: Debian's (never a downloaded
 * one), headless, without the services a CI machine has no use for.
 */
module.exports = {
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--disable-quic',
    '--no-first-run'
  ]
};
