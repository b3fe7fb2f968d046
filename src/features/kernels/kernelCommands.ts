/**
 * The Kernels tab's command, which shuts down a notebook's kernel after
 * asking. The confirmation and the rows that name the kernel load when the
 * command is first used, not with the page.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { TranslationBundle } from '@jupyterlab/translation';

import type { MemoryMonitor } from '../../monitor/MemoryMonitor';
import { errorText } from '../../text/errorText';
import { CommandIDs } from '../../ui/commandIds';
import type { Notify } from '../../ui/notify';
import type { ShutdownKernelRequest } from './ShutdownKernelDialog';

/** Registers `shutdown-kernel`. */
export function registerKernelCommands(options: {
  app: JupyterFrontEnd;
  monitor: MemoryMonitor;
  trans: TranslationBundle;
  notify: Notify;
  /**
   * The shutdown confirmation; it defaults to the dialog, and tests answer
   * directly.
   */
  confirmShutdown?: (request: ShutdownKernelRequest) => Promise<boolean>;
}): void {
  const { app, monitor, trans, notify } = options;
  const confirmShutdown =
    options.confirmShutdown ??
    (async (request: ShutdownKernelRequest) =>
      (await import('./ShutdownKernelDialog')).confirmShutdownKernelDialog(
        request
      ));

  app.commands.addCommand(CommandIDs.shutdownKernel, {
    label: trans.__('Shut Down Kernel\u2026'),
    caption: trans.__(
      "Shut down a notebook's kernel (asks first); the notebook stays open with no kernel"
    ),
    execute: async args => {
      const kernelId = typeof args.kernelId === 'string' ? args.kernelId : '';
      const sessions = kernelId ? monitor.sessionsOfKernel(kernelId) : [];
      if (!sessions.length) {
        notify(
          'info',
          trans.__('That kernel is not running in an open notebook any more.')
        );
        return false;
      }
      // The kernel is named as its row in the Kernels tab names it.
      const { kernelRows, kernelSourceOf } = await import('./KernelsOverview');
      const [row] = kernelRows(sessions.map(kernelSourceOf));
      // The server's other sessions on that kernel lose it too, so they are
      // named as well.
      const others: string[] = [];
      for (const session of app.serviceManager?.sessions?.running?.() ?? []) {
        if (
          session.kernel?.id === kernelId &&
          !row.paths.includes(session.path)
        ) {
          others.push(
            session.type === 'console'
              ? trans.__(
                  'the console \u201c%1\u201d',
                  session.name || session.path
                )
              : `\u201c${session.path}\u201d`
          );
        }
      }
      const confirmed = await confirmShutdown({
        kernelId,
        kernelName: row.displayName ?? row.kernelName,
        paths: row.paths,
        ...(others.length ? { others } : {})
      });
      if (!confirmed) {
        return false;
      }
      // The notebooks on the kernel may have changed while the dialog was
      // open, so only a kernel that the notebooks it named still share is
      // shut down.
      const now = monitor
        .sessionsOfKernel(kernelId)
        .filter(s => s.sessionContext.session?.kernel?.id === kernelId);
      if (!now.length) {
        notify(
          'info',
          trans.__(
            'That kernel is not running in an open notebook any more: nothing was shut down.'
          )
        );
        return false;
      }
      const [nowRow] = kernelRows(now.map(kernelSourceOf));
      if (nowRow.paths.some(path => !row.paths.includes(path))) {
        notify(
          'warning',
          trans.__(
            'Another notebook uses that kernel now, which the question did not name: nothing was shut down. Ask again.'
          )
        );
        return false;
      }
      const context = now[0].sessionContext;
      try {
        // This does what the notebook's own "Shut Down Kernel" does: the
        // session ends and the notebook shows "No Kernel", ready to start
        // another.
        await context.shutdown();
      } catch (reason) {
        notify(
          'error',
          trans.__('Could not shut down the kernel: %1', errorText(reason))
        );
        return false;
      }
      return true;
    }
  });
}
