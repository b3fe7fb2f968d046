/**
 * A webpack loader that compacts this package's own stylesheets (style/*.css)
 * before css-loader reads them: it drops the comments and the indentation, and
 * keeps everything else, strings included, as written.
 *
 * Why: JupyterLab's builder puts a stylesheet into the page's JavaScript as a
 * string, as it was written, and the page fetches style/base.css at start-up,
 * whose comments (they say why each rule is there) were a third of its size.
 * Strings (`content: ' \25B4'`) pass untouched; whitespace is kept as one
 * space wherever it may matter (a descendant combinator, `a :hover`), and
 * dropped only next to braces and semicolons.
 */
// A comment or a string, whichever starts first: an apostrophe in a comment
// starts no string, and "/*" in a string starts no comment.
const COMMENT_OR_STRING =
  /(\/\*[\s\S]*?\*\/|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")/;

/** The stylesheet `source` with its comments and needless whitespace removed. */
function compactCss(source) {
  let out = '';
  let between = ''; // the text since the last string, comments made spaces
  source.split(COMMENT_OR_STRING).forEach((part, i) => {
    if (i % 2 === 0 || part.startsWith('/*')) {
      // A comment separates tokens as a space does ("a/**/b" is not "ab").
      between += i % 2 === 0 ? part : ' ';
      return;
    }
    out += compactWhitespace(between) + part;
    between = '';
  });
  return (out + compactWhitespace(between)).trim();
}

/** Text outside strings: one space for each run, none next to a brace or a semicolon. */
function compactWhitespace(text) {
  return text.replace(/\s+/g, ' ').replace(/ ?([{};]) ?/g, '$1');
}

module.exports = function compactCssLoader(source) {
  return compactCss(source);
};
module.exports.compactCss = compactCss;
