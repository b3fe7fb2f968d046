// SVG files are bundled as strings (JupyterLab builder, jest raw loader).
declare module '*.svg' {
  const value: string;
  export default value;
}
