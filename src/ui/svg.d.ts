// SVG files are bundled as strings, by the JupyterLab builder and by jest's
// raw loader, so importing one gives its text.
declare module '*.svg' {
  const value: string;
  export default value;
}
