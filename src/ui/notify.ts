/**
 * How commands tell the user what happened: a JupyterLab notification in the
 * app, a recording fake in tests.
 */
import { Notification } from '@jupyterlab/apputils';

/** Shows one notification of the given type. */
export type Notify = (
  type: 'info' | 'success' | 'warning' | 'error',
  message: string
) => void;

/** Shows a JupyterLab notification; errors stay until dismissed. */
export const notifyInJupyterLab: Notify = (type, message) => {
  // Notification messages are plain text (kernel text stays text).
  Notification.emit(message, type, {
    autoClose: type === 'error' ? false : 6000
  });
};
