/**
 * Follows the active notebook and owns one KernelMemoryModel (with its
 * KernelHelperConnection) per notebook session. Two views of one notebook
 * share one session context, and so one model and one comm.
 *
 * `current` is the model of the notebook the user works in; the sidebar and
 * the status bar show it. Models of background notebooks keep recording, so
 * switching back shows their history.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { KernelDeathWatch } from '../kernel/KernelDeathWatch';
import { cellIdOfOtherPagesCode } from './cellOfCode';
import { KernelHelperConnection } from '../kernel/KernelHelperConnection';
import { CommsLeftOpen, OpenComm } from '../kernel/CommsLeftOpen';
import { RequestAbandonedError } from '../kernel/PendingRequests';
import { HelperRequestResults } from '../protocol/messages';
import {
  DEFAULT_SETTINGS,
  configForHelper,
  helperConfigFor,
  historyCapacityFor,
  sameSettings,
  VramSettings
} from '../settings/settings';
import { IKernelMemoryModel } from '../model/IKernelMemoryModel';
import type { IVramMonitor } from './IVramMonitor';
import { BrowserKeeping } from '../storage/BrowserKeeping';
import { ICellRecordStore } from '../storage/CellHistoryPersistence';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { errorText } from '../text/errorText';
import {
  IHelperConnection,
  IMonitoredNotebook,
  IMonitoredSession,
  IMonitoredSessionEntry,
  INotebookSource
} from './monitoredSession';
import { ISessionPart, SessionPartKind } from './sessionParts';
import { SessionPersistence } from '../storage/SessionPersistence';
import { ITimelineStore } from '../storage/TimelinePersistence';
import { trans } from '../text/translation';

/**
 * Follows the active notebook and owns one memory model, with its helper
 * connection, per notebook session.
 */
export class MemoryMonitor implements IVramMonitor {
  constructor(options: MemoryMonitor.IOptions) {
    this._notebooks = options.notebooks;
    this._settings = options.settings ?? { ...DEFAULT_SETTINGS };
    this._createConnection =
      options.createConnection ??
      ((sessionContext, model) =>
        new KernelHelperConnection({
          sessionContext,
          model,
          config: () => helperConfigFor(this._settings),
          commsLeftOpen: this._commsLeftOpen ?? undefined
        }));
    // A test that fakes the connection also fakes the watch or leaves it
    // out, so no real watch is made then.
    this._createDeathWatch =
      options.createDeathWatch ??
      (options.createConnection
        ? () => null
        : (sessionContext, model) =>
            new KernelDeathWatch({
              sessionContext,
              model,
              // The panel is looked up among the views open at the death
              // rather than kept. The view that the session began with may
              // close first, and its notebook then lets go of its cells; if
              // it were kept, it would be held here until the last view
              // closed.
              cellIdOfCode: (code, client) => {
                const panel = this._sessions
                  .get(sessionContext)
                  ?.panels.values()
                  .next().value;
                return panel
                  ? cellIdOfOtherPagesCode(
                      panel,
                      code,
                      client,
                      this._isPageClient
                    )
                  : null;
              }
            }));
    this._keeping = new BrowserKeeping({
      recordStore: options.recordStore ?? null,
      timelineStore: options.timelineStore ?? null,
      settingsKnown: !options.settingsLoading
    });
    this._commsLeftOpen = options.commsLeftOpen ?? null;
    this._isPageClient = options.isPageClient ?? (() => false);
    for (const kind of options.partKinds ?? []) {
      this.addPartKind(kind);
    }
    this._notebooks.currentChanged.connect(this._onCurrentChanged, this);
    this._onCurrentChanged(this._notebooks, this._notebooks.currentWidget);
  }

  get current(): KernelMemoryModel | null {
    return this._current;
  }
  get currentChanged(): ISignal<this, IKernelMemoryModel | null> {
    return this._currentChanged;
  }
  get settings(): VramSettings {
    return this._settings;
  }
  get settingsChanged(): ISignal<this, VramSettings> {
    return this._settingsChanged;
  }
  /**
   * Emitted when a notebook panel starts being monitored, with the model of
   * its kernel, so that the per-cell badges can attach to the panel then.
   */
  get panelTracked(): ISignal<
    this,
    { panel: IMonitoredNotebook; model: KernelMemoryModel }
  > {
    return this._panelTracked;
  }
  /** The number of notebook sessions monitored. */
  get sessionCount(): number {
    return this._sessions.size;
  }
  /**
   * Emitted when a session starts or stops being monitored, or a notebook
   * panel joins or leaves one, that is, when what `sessions()` returns
   * changed. Figures and kernel states are announced by each model's own
   * `changed` instead.
   */
  get sessionsChanged(): ISignal<this, void> {
    return this._sessionsChanged;
  }
  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * The model of a monitored panel's kernel, or null if the panel is not
   * monitored.
   */
  modelFor(panel: IMonitoredNotebook): KernelMemoryModel | null {
    return this._sessions.get(panel.sessionContext)?.model ?? null;
  }

  /**
   * The session of a monitored panel, with its model, connection and actions.
   */
  sessionFor(panel: IMonitoredNotebook): IMonitoredSession | null {
    return this._sessions.get(panel.sessionContext) ?? null;
  }

  /** Every monitored session, in the order they were first tracked. */
  sessions(): IMonitoredSessionEntry[] {
    return Array.from(this._sessions.entries(), ([sessionContext, entry]) => ({
      model: entry.model,
      connection: entry.connection,
      sessionContext,
      panels: Array.from(entry.panels)
    }));
  }

  /**
   * The monitored sessions whose kernel has id `kernelId`. There are several
   * when notebooks share a kernel, and none when no session has it.
   */
  sessionsOfKernel(kernelId: string): IMonitoredSessionEntry[] {
    return this.sessions().filter(
      entry => entry.sessionContext.session?.kernel?.id === kernelId
    );
  }

  /**
   * Makes a part of this kind, which is a feature's per-kernel object (see
   * sessionParts.ts), for every current session and every later one.
   * Registering a kind twice changes nothing.
   */
  addPartKind(kind: SessionPartKind<ISessionPart>): void {
    if (this._partKinds.includes(kind)) {
      return;
    }
    this._partKinds.push(kind);
    for (const entry of this._sessions.values()) {
      this._addPart(entry, kind);
    }
  }

  /**
   * Emitted when the parts of a kind loaded later were made for the sessions
   * open when its code came (see sessionParts.ts), so that code that found
   * none may ask again.
   */
  get partsChanged(): ISignal<this, SessionPartKind<ISessionPart>> {
    return this._partsChanged;
  }

  /**
   * The part of this kind for the kernel that `model` describes, or null if
   * none.
   */
  partFor<T extends ISessionPart>(
    kind: SessionPartKind<T>,
    model: IKernelMemoryModel | null
  ): T | null {
    if (!model) {
      return null;
    }
    for (const entry of this._sessions.values()) {
      if (entry.model === model) {
        return (entry.parts.get(kind) as T | undefined) ?? null;
      }
    }
    return null;
  }

  /**
   * The part of this kind for the active notebook's kernel, or null if none.
   */
  currentPart<T extends ISessionPart>(kind: SessionPartKind<T>): T | null {
    return this.partFor(kind, this._current);
  }

  /** The monitored panels whose kernel `model` describes. */
  panelsOf(model: IKernelMemoryModel): IMonitoredNotebook[] {
    for (const entry of this._sessions.values()) {
      if (entry.model === model) {
        return Array.from(entry.panels);
      }
    }
    return [];
  }

  /** The session the active notebook belongs to, if any. */
  get currentSession(): IMonitoredSession | null {
    const panel = this._notebooks.currentWidget;
    return panel ? (this._sessions.get(panel.sessionContext) ?? null) : null;
  }

  async refresh(): Promise<HelperRequestResults['snapshot']> {
    const session = this.currentSession;
    if (!session) {
      throw new Error(trans.__('No notebook is open.'));
    }
    return session.connection.requestSnapshot();
  }

  /** Delivers the helper to the active kernel again, after a failure. */
  reconnect(): void {
    this.currentSession?.connection.reconnect();
  }

  /**
   * Applies new settings to every model and helper at once, without a reload.
   */
  updateSettings(settings: VramSettings): void {
    const firstKnown = !this._keeping.settingsKnown;
    if (sameSettings(settings, this._settings)) {
      if (firstKnown) {
        this._keepHistories();
      }
      return;
    }
    const old = this._settings;
    this._settings = settings;
    const config = helperConfigFor(settings);
    const configChanged =
      JSON.stringify(config) !== JSON.stringify(helperConfigFor(old));
    for (const session of this._sessions.values()) {
      session.model.setHistoryCapacity(historyCapacityFor(settings));
      for (const part of session.parts.values()) {
        part.settingsChanged?.(settings, old);
      }
      if (configChanged) {
        const applied = session.connection.configure(
          configForHelper(config, session.model.hello?.config)
        );
        session.model.settingsSent(applied);
        applied.catch(reason => {
          if (reason instanceof RequestAbandonedError) {
            // The kernel restarted or reconnected, and the new comm opens
            // with these settings, so there is nothing to report.
            return;
          }
          session.model.reportProblem(
            trans.__(
              'Could not apply the new sampling settings: %1',
              errorText(reason)
            )
          );
        });
      }
    }
    this._keepHistories();
    this._settingsChanged.emit(settings);
  }

  /**
   * Called when a cell of `panel` is about to be sent to its kernel, so that
   * its connection may deliver the helper ahead of it (see
   * deliverBeforeExecution).
   */
  beforeExecution(panel: IMonitoredNotebook): void {
    this.sessionFor(panel)?.connection.deliverBeforeExecution?.();
  }

  /**
   * Called when the page is going away, and not into the browser's
   * back-forward cache. It remembers the comms open in kernels for the next
   * page in this tab, and tries to close them.
   */
  pageExit(): void {
    const open: OpenComm[] = [];
    for (const { connection } of this._sessions.values()) {
      const comm = connection.openComm;
      if (comm) {
        open.push(comm);
      }
      connection.closeForPageExit?.();
    }
    for (const { persistence } of this._sessions.values()) {
      persistence?.flush();
    }
    this._commsLeftOpen?.remember(open);
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._notebooks.currentChanged.disconnect(this._onCurrentChanged, this);
    for (const sessionContext of Array.from(this._sessions.keys())) {
      this._removeSession(sessionContext);
    }
    this._current = null;
    Signal.clearData(this);
  }

  private _onCurrentChanged(
    _: unknown,
    panel: IMonitoredNotebook | null
  ): void {
    if (this._isDisposed) {
      return;
    }
    const model = panel && !panel.isDisposed ? this._track(panel).model : null;
    if (model !== this._current) {
      this._current = model;
      this._currentChanged.emit(model);
    }
  }

  /** Starts monitoring the session of `panel`, once per session context. */
  private _track(panel: IMonitoredNotebook): IMonitoredSession {
    const sessionContext = panel.sessionContext;
    let entry = this._sessions.get(sessionContext);
    if (!entry) {
      const model = new KernelMemoryModel({
        historyCapacity: historyCapacityFor(this._settings)
      });
      // The death watch is made before the connection, because it must see
      // a death before the connection forgets the dead kernel's figures
      // (see KernelDeathWatch).
      const deathWatch = this._createDeathWatch(sessionContext, model);
      // The persistence is made before the connection too, because saved
      // records are read while the connection starts.
      const persistence = this._keeping.persistenceFor(
        sessionContext,
        model,
        this._settings
      );
      const connection = this._createConnection(sessionContext, model);
      entry = {
        model,
        connection,
        parts: new Map(),
        deathWatch,
        persistence,
        panels: new Set()
      };
      for (const kind of this._partKinds) {
        this._addPart(entry, kind);
      }
      this._sessions.set(sessionContext, entry);
    }
    if (!entry.panels.has(panel)) {
      entry.panels.add(panel);
      panel.disposed.connect(this._onPanelDisposed, this);
      this._panelTracked.emit({ panel, model: entry.model });
      this._sessionsChanged.emit();
    }
    return entry;
  }

  private _addPart(
    entry: MemoryMonitor.ISessionEntry,
    kind: SessionPartKind<ISessionPart>
  ): void {
    const create = kind.create;
    if (!create) {
      this._loadPartKind(kind);
      return;
    }
    const part = create({
      model: entry.model,
      connection: entry.connection,
      settings: () => this._settings
    });
    if (part) {
      entry.parts.set(kind, part);
    }
  }

  /**
   * Fetches the code of a kind loaded later, then makes its parts for the
   * sessions open by then and says so through `partsChanged`.
   */
  private _loadPartKind(kind: SessionPartKind<ISessionPart>): void {
    if (this._partKindsLoading.has(kind)) {
      // One fetch serves every session followed in the meantime.
      return;
    }
    this._partKindsLoading.add(kind);
    kind.load().then(
      () => {
        this._partKindsLoading.delete(kind);
        if (this._isDisposed) {
          return;
        }
        for (const entry of this._sessions.values()) {
          if (!entry.parts.has(kind)) {
            this._addPart(entry, kind);
          }
        }
        this._partsChanged.emit(kind);
      },
      reason => {
        this._partKindsLoading.delete(kind);
        console.warn(
          `jupyterlab-vram: could not load the ${kind.name}; they are fetched again when another notebook opens.`,
          reason
        );
      }
    );
  }

  private _keepHistories(): void {
    this._keeping.apply(
      this._settings,
      Array.from(this._sessions.values(), entry => entry.persistence)
    );
  }

  private _onPanelDisposed(panel: IMonitoredNotebook): void {
    panel.disposed.disconnect(this._onPanelDisposed, this);
    const entry = this._sessions.get(panel.sessionContext);
    if (!entry) {
      return;
    }
    entry.panels.delete(panel);
    if (entry.panels.size === 0) {
      const model = entry.model;
      this._removeSession(panel.sessionContext);
      if (this._current === model) {
        // The tracker announces the next notebook; until then, none is
        // shown.
        this._current = null;
        this._currentChanged.emit(null);
      }
    } else {
      this._sessionsChanged.emit();
    }
  }

  private _removeSession(sessionContext: ISessionContext): void {
    const entry = this._sessions.get(sessionContext);
    if (!entry) {
      return;
    }
    this._sessions.delete(sessionContext);
    for (const panel of entry.panels) {
      panel.disposed.disconnect(this._onPanelDisposed, this);
    }
    for (const part of entry.parts.values()) {
      part.dispose();
    }
    entry.deathWatch?.dispose();
    entry.persistence?.dispose();
    entry.connection.dispose();
    entry.model.dispose();
    this._sessionsChanged.emit();
  }

  private _keeping: BrowserKeeping;
  private _commsLeftOpen: CommsLeftOpen | null;
  private _isPageClient: (client: string) => boolean;
  private _notebooks: INotebookSource;
  private _settings: VramSettings;
  private _createConnection: MemoryMonitor.ConnectionFactory;
  private _createDeathWatch: MemoryMonitor.DeathWatchFactory;
  private _sessions = new Map<ISessionContext, MemoryMonitor.ISessionEntry>();
  private _partKinds: SessionPartKind<ISessionPart>[] = [];
  private _partKindsLoading = new Set<SessionPartKind<ISessionPart>>();
  private _current: KernelMemoryModel | null = null;
  private _currentChanged = new Signal<this, IKernelMemoryModel | null>(this);
  private _settingsChanged = new Signal<this, VramSettings>(this);
  private _partsChanged = new Signal<this, SessionPartKind<ISessionPart>>(this);
  private _sessionsChanged = new Signal<this, void>(this);
  private _panelTracked = new Signal<
    this,
    { panel: IMonitoredNotebook; model: KernelMemoryModel }
  >(this);
  private _isDisposed = false;
}

/** The types that go with MemoryMonitor. */
export namespace MemoryMonitor {
  /** Creates the helper connection of a session's model. */
  export type ConnectionFactory = (
    sessionContext: ISessionContext,
    model: KernelMemoryModel
  ) => IHelperConnection;

  /**
   * Makes a watch of a session for deaths the user did not ask for, or null for
   * none.
   */
  export type DeathWatchFactory = (
    sessionContext: ISessionContext,
    model: KernelMemoryModel
  ) => IDisposable | null;

  /** The options a new MemoryMonitor is constructed with. */
  export interface IOptions {
    /** The notebooks to follow, usually the INotebookTracker. */
    notebooks: INotebookSource;
    settings?: VramSettings;
    /** Defaults to a KernelHelperConnection; tests pass fakes. */
    createConnection?: ConnectionFactory;
    /** Defaults to a KernelDeathWatch, or none when the connection is faked. */
    createDeathWatch?: DeathWatchFactory;
    /**
     * Where cell histories are kept between pages, which is IndexedDB in
     * JupyterLab. Without it, they last for the page only.
     */
    recordStore?: ICellRecordStore | null;
    /**
     * Where timelines are kept between pages, which is IndexedDB in
     * JupyterLab. Without it, they last for the page only.
     */
    timelineStore?: ITimelineStore | null;
    /**
     * True when the settings are on their way from a settings registry, so
     * that nothing is kept in the browser until `updateSettings` brings them.
     */
    settingsLoading?: boolean;
    /**
     * The comms that an earlier page in this tab left open (see
     * CommsLeftOpen.ts). Without it, they are not tracked.
     */
    commsLeftOpen?: CommsLeftOpen | null;
    /**
     * Whether a kernel client id is one of this page's connections, either a
     * notebook's or a console's.
     */
    isPageClient?: (client: string) => boolean;
    /**
     * The kinds of per-kernel parts to make for every session; `addPartKind`
     * adds more.
     */
    partKinds?: SessionPartKind<ISessionPart>[];
  }

  /** What the monitor keeps of one session. */
  export interface ISessionEntry extends IMonitoredSession {
    /** The features' per-kernel parts, by kind. */
    readonly parts: Map<SessionPartKind<ISessionPart>, ISessionPart>;
    readonly deathWatch: IDisposable | null;
    /**
     * Keeps the cell history and timeline in the browser, as the settings
     * say, or null without stores.
     */
    readonly persistence: SessionPersistence | null;
    readonly panels: Set<IMonitoredNotebook>;
  }
}
