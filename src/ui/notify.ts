/**
 * How commands tell the user what happened: with a JupyterLab notification
 * in the app, and with a recording fake in tests.
 */
import { Notification } from '@jupyterlab/apputils';

/** Shows one notification of the given type. */
export type Notify = (
  type: 'info' | 'success' | 'warning' | 'error',
  message: string
) => void;

/** Shows a JupyterLab notification; errors stay until dismissed. */
export const notifyInJupyterLab: Notify = (type, message) => {
  // Notification messages are plain text, so text from the kernel is never
  // parsed as HTML.
  Notification.emit(message, type, {
    autoClose: type === 'error' ? false : 6000
  });
};
