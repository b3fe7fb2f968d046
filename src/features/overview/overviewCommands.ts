/**
 * The commands of the Memory tab's figures: refresh them now, and choose how
 * much history the timeline shows.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';

import type { MemoryMonitor } from '../../monitor/MemoryMonitor';
import { SETTING_LIMITS, type SetSetting } from '../../settings/settings';
import { CommandIDs } from '../../ui/commandIds';

/** Registers `refresh` and `set-timeline-window`, and lists `refresh` in the palette. */
export function registerOverviewCommands(options: {
  app: JupyterFrontEnd;
  monitor: MemoryMonitor;
  trans: TranslationBundle;
  palette: ICommandPalette | null;
  category: string;
  setSetting: SetSetting;
}): void {
  const { app, monitor, trans, palette, category } = options;
  app.commands.addCommand(CommandIDs.refresh, {
    label: trans.__('Refresh GPU Memory'),
    caption: trans.__(
      'Ask the active kernel for fresh memory figures (restarts the helper if it stopped)'
    ),
    isEnabled: () => monitor.current !== null,
    execute: async () => {
      const model = monitor.current;
      if (!model) {
        return null;
      }
      if (model.state !== 'live') {
        monitor.reconnect();
        return null;
      }
      try {
        return await monitor.refresh();
      } catch (reason) {
        // A failed refresh is only logged: the panel shows a problem when it
        // matters, and a timeout while a cell runs is normal.
        console.warn('jupyterlab-vram: refresh failed', reason);
        return null;
      }
    }
  });

  app.commands.addCommand(CommandIDs.setTimelineWindow, {
    label: args =>
      typeof args.minutes === 'number'
        ? trans.__('Show the Last %1 Minutes of Memory History', args.minutes)
        : trans.__('Set the Timeline Span'),
    caption: trans.__(
      'How much history the memory timeline shows: {"minutes": 60}'
    ),
    execute: async args => {
      const minutes = Number(args.minutes);
      const { min, max } = SETTING_LIMITS.timelineWindowMinutes;
      if (!Number.isFinite(minutes)) {
        throw new Error(
          trans.__(
            'The timeline span must be a number of minutes, not %1.',
            String(args.minutes)
          )
        );
      }
      await options.setSetting(
        'timelineWindowMinutes',
        Math.min(max, Math.max(min, minutes))
      );
    }
  });

  // Refresh is enabled only while a kernel is followed, so the menus and the
  // palette are told to ask again whenever that changes.
  monitor.currentChanged.connect(() =>
    app.commands.notifyCommandChanged(CommandIDs.refresh)
  );
  palette?.addItem({ command: CommandIDs.refresh, category });
}
