/**
 * Merged by the JupyterLab builder into its webpack configuration
 * (package.json's jupyterlab.webpackConfig). It does two things: it compacts
 * this package's own stylesheets before the builder's css-loader reads them
 * (scripts/compact-css-loader.cjs says why), and it makes the build's report
 * say what a user needs.
 *
 * The builder prints `stats.toString({ colors })` after the build, which
 * ignores the configuration's `stats` option and gives webpack's "normal"
 * report: ~25 lines of asset sizes, chunks and shared modules on every
 * build. This plugin gives that report webpack's "errors-warnings" preset,
 * and the version and time: a clean build says "webpack 5.x compiled
 * successfully in N ms", and any error or warning is still printed whole.
 */
class BuildReportPlugin {
  apply(compiler) {
    compiler.hooks.compilation.tap('BuildReportPlugin', compilation => {
      // Before webpack's own defaults fill the options in (stage 0).
      compilation.hooks.statsNormalize.tap(
        { name: 'BuildReportPlugin', stage: -100 },
        (options, context) => {
          if (!context.forToString || options.preset !== undefined) {
            return; // asked for by name elsewhere: left as asked
          }
          compilation.hooks.statsPreset
            .for('errors-warnings')
            .call(options, context);
          options.version = true;
          options.timings = true;
        }
      );
    });
  }
}

const path = require('path');

module.exports = {
  module: {
    rules: [
      {
        // Matched as well as the builder's own rule for .css (style-loader,
        // css-loader), whose loaders come first in the list: the last loader
        // runs first, so css-loader reads the compacted sheet.
        test: /\.css$/,
        include: path.resolve(__dirname, 'style'),
        use: [path.resolve(__dirname, 'scripts', 'compact-css-loader.cjs')]
      }
    ]
  },
  plugins: [new BuildReportPlugin()]
};
