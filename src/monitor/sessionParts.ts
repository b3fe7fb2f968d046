/**
 * Per-kernel objects that features attach to every monitored session. The
 * monitor creates one part of each registered kind when it starts following
 * a kernel, tells it of new settings, and disposes of it with the session.
 * Features keep their per-kernel state this way (the cleanup actions, the
 * allocation recording) without the monitor knowing what they are.
 */
import { IDisposable } from '@lumino/disposable';

import type { KernelMemoryModel } from '../model/KernelMemoryModel';
import type { VramSettings } from '../settings/settings';
import type { IHelperConnection } from './monitoredSession';

/** What a part is made from: one kernel's model and helper connection. */
export interface ISessionPartContext {
  readonly model: KernelMemoryModel;
  readonly connection: IHelperConnection;
  /** The settings in force now (they change: read them when needed). */
  settings(): VramSettings;
}

/** A per-kernel object of a feature. */
export interface ISessionPart extends IDisposable {
  /** The user changed the settings (`old` were in force until now). */
  settingsChanged?(settings: VramSettings, old: VramSettings): void;
}

/**
 * A kind of session part: its name (for messages) and how to make one for a
 * session, or null where that session's connection cannot serve it.
 */
export class SessionPartKind<T extends ISessionPart> {
  constructor(
    readonly name: string,
    readonly create: (context: ISessionPartContext) => T | null
  ) {}
}
