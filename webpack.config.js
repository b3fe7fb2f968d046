/**
 * Merged by the JupyterLab builder into its webpack configuration
 * (package.json's jupyterlab.webpackConfig). It changes no output: it only
 * makes the build's report say what a user needs.
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

module.exports = {
  plugins: [new BuildReportPlugin()]
};
