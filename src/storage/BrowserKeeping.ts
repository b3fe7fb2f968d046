/**
 * Decides what the browser keeps of every monitored notebook between pages,
 * as the settings say. It runs a SessionPersistence per session, started and
 * stopped when the settings change, and it forgets what the browser is no
 * longer to keep, for every notebook, whether this page or an earlier one
 * kept it.
 */
import { ISessionContext } from '@jupyterlab/apputils';

import { VramSettings } from '../settings/settings';
import { ICellRecordStore } from './CellHistoryPersistence';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { KeptHistories, SessionPersistence } from './SessionPersistence';
import { ITimelineStore } from './TimelinePersistence';

/**
 * Decides what the browser database keeps for this page, following the user's
 * settings.
 */
export class BrowserKeeping {
  constructor(options: BrowserKeeping.IOptions) {
    this._recordStore = options.recordStore;
    this._timelineStore = options.timelineStore;
    this._settingsKnown = options.settingsKnown;
  }

  /** Whether the user's settings have been read (until then nothing is kept). */
  get settingsKnown(): boolean {
    return this._settingsKnown;
  }

  /** The keeper of a newly monitored session (none without a store), keeping what `settings` ask for. */
  persistenceFor(
    sessionContext: ISessionContext,
    model: KernelMemoryModel,
    settings: VramSettings
  ): SessionPersistence | null {
    if (!this._recordStore && !this._timelineStore) {
      return null;
    }
    const persistence = new SessionPersistence({
      sessionContext,
      model,
      recordStore: this._recordStore,
      timelineStore: this._timelineStore
    });
    void persistence.update(this._kept(settings));
    return persistence;
  }

  /**
   * The settings are known (again): start and stop the keepers as they say.
   * What is not to be kept is forgotten once they say so, after the stopped
   * keepers' last writes, and again after each time they asked to keep it.
   */
  apply(
    settings: VramSettings,
    keepers: Iterable<SessionPersistence | null>
  ): void {
    this._settingsKnown = true;
    const wanted = this._kept(settings);
    const written = Promise.all(
      [...keepers].map(keeper => keeper?.update(wanted))
    );
    const forget = (
      store: { forgetAll(): Promise<void> } | null,
      what: string
    ) => {
      void written
        .then(() => store?.forgetAll())
        .catch(reason =>
          console.warn(
            `jupyterlab-vram: could not forget the ${what} this browser kept:`,
            reason
          )
        );
    };
    if (!wanted.cells && !this._forgotten.cells) {
      forget(this._recordStore, 'cell histories');
    }
    if (!wanted.timeline && !this._forgotten.timeline) {
      forget(this._timelineStore, 'memory timelines');
    }
    this._forgotten = { cells: !wanted.cells, timeline: !wanted.timeline };
  }

  /**
   * What the browser keeps, as the settings say; nothing until they are
   * known (a notebook restored with the page opens before the settings
   * load: it must not be written under the defaults).
   */
  private _kept(settings: VramSettings): KeptHistories {
    const known = this._settingsKnown;
    return {
      cells: known && settings.rememberCellHistory,
      timeline: known && settings.rememberTimeline
    };
  }

  private _recordStore: ICellRecordStore | null;
  private _timelineStore: ITimelineStore | null;
  private _settingsKnown: boolean;
  /** What is not kept and was forgotten since the settings last asked to keep it. */
  private _forgotten: KeptHistories = { cells: false, timeline: false };
}

/** The types that go with BrowserKeeping. */
export namespace BrowserKeeping {
  /** The options a new BrowserKeeping is constructed with. */
  export interface IOptions {
    recordStore: ICellRecordStore | null;
    timelineStore: ITimelineStore | null;
    /** False while the user's settings are on their way. */
    settingsKnown: boolean;
  }
}
