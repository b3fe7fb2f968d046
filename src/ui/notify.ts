/**
 * How commands tell the user what happened: a JupyterLab notification in the
 * app, a recording fake in tests.
 */

/** Shows one notification of the given type. */
export type Notify = (
  type: 'info' | 'success' | 'warning' | 'error',
  message: string
) => void;
