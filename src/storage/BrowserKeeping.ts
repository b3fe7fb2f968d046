/**
 * Decides what the browser keeps of every monitored notebook between pages,
 * following the settings. It runs one SessionPersistence per session,
 * starting and stopping it when the settings change. When the settings stop
 * keeping something, it forgets that data for every notebook, whether this
 * page or an earlier one saved it.
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

  /** Whether the user's settings have been read; until then nothing is kept. */
  get settingsKnown(): boolean {
    return this._settingsKnown;
  }

  /** Creates the keeper of a newly monitored session, keeping what `settings` ask for; returns none without a store. */
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
   * Called when the settings are known, at start or after a change. It
   * starts and stops the keepers as the settings say. Data that is no longer
   * to be kept is forgotten once, after the stopped keepers' last writes. It
   * is forgotten again only after the settings have asked to keep it again
   * and then stopped once more.
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
   * What the browser keeps, as the settings say. Nothing is kept until the
   * settings are known, because a notebook restored with the page opens
   * before the settings load, and it must not be written under the defaults.
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
  /** The kinds of data that are not kept and have been forgotten since the settings last asked to keep them. */
  private _forgotten: KeptHistories = { cells: false, timeline: false };
}

/** The types that go with BrowserKeeping. */
export namespace BrowserKeeping {
  /** The options a new BrowserKeeping is constructed with. */
  export interface IOptions {
    recordStore: ICellRecordStore | null;
    timelineStore: ITimelineStore | null;
    /** False while the user's settings are still loading. */
    settingsKnown: boolean;
  }
}
