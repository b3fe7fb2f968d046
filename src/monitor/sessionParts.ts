/**
 * Per-kernel objects that features attach to every monitored session. The
 * monitor creates one part of each registered kind when it starts following
 * a kernel, tells it of new settings, and disposes of it with the session.
 * Features keep their per-kernel state this way (the cleanup actions, the
 * allocation recording) without the monitor knowing what they are.
 *
 * A kind's code may be loaded later (`SessionPartKind.loadedLater`), so
 * that a page that never opens a notebook never fetches it. Its parts are
 * made once the code is there, for every session open at that time, and the
 * monitor's `partsChanged` tells whoever asked for one in the meantime.
 */
import { IDisposable } from '@lumino/disposable';

import type { KernelMemoryModel } from '../model/KernelMemoryModel';
import type { VramSettings } from '../settings/settings';
import type { IHelperConnection } from './monitoredSession';

/**
 * What a part is made from, which is one kernel's model and helper connection.
 */
export interface ISessionPartContext {
  readonly model: KernelMemoryModel;
  readonly connection: IHelperConnection;
  /**
   * Returns the settings in force. They change, so read them when they are
   * needed rather than keeping them.
   */
  settings(): VramSettings;
}

/** A per-kernel object of a feature. */
export interface ISessionPart extends IDisposable {
  /** Called when the user changed the settings; `old` were in force before. */
  settingsChanged?(settings: VramSettings, old: VramSettings): void;
}

/**
 * Makes a part for a session, or returns null where its connection cannot serve
 * it.
 */
export type SessionPartFactory<T extends ISessionPart> = (
  context: ISessionPartContext
) => T | null;

/**
 * A kind of session part: its name, for messages, and how to make one for a
 * session, or null where that session's connection cannot serve it.
 */
export class SessionPartKind<T extends ISessionPart> {
  /** A kind whose factory is at hand. */
  constructor(name: string, create: SessionPartFactory<T>) {
    this.name = name;
    this._create = create;
  }

  /**
   * A kind whose factory `load` fetches, as a separately loaded part of the
   * bundle, the first time a session needs a part of it.
   */
  static loadedLater<T extends ISessionPart>(
    name: string,
    load: () => Promise<SessionPartFactory<T>>
  ): SessionPartKind<T> {
    const kind = new SessionPartKind<T>(name, () => null);
    kind._create = null;
    kind._load = load;
    return kind;
  }

  /** The kind's name, for messages. */
  readonly name: string;

  /** The factory, or null while it is still to be loaded (see `load`). */
  get create(): SessionPartFactory<T> | null {
    return this._create;
  }

  /** Loads the factory once; a failed load is tried again the next time. */
  load(): Promise<SessionPartFactory<T>> {
    if (this._create) {
      return Promise.resolve(this._create);
    }
    if (!this._loading) {
      const load = this._load as () => Promise<SessionPartFactory<T>>;
      this._loading = load().then(
        create => (this._create = create),
        reason => {
          this._loading = null;
          throw reason;
        }
      );
    }
    return this._loading;
  }

  private _create: SessionPartFactory<T> | null;
  private _load: (() => Promise<SessionPartFactory<T>>) | null = null;
  private _loading: Promise<SessionPartFactory<T>> | null = null;
}
