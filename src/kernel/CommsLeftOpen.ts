/**
 * Tracks the comms that a page leaves open in kernels when it goes away (a
 * reload, a navigation, a closed tab). A page sends no `comm_close` as it
 * goes, so the kernel cannot tell such a comm from a live one. The helper
 * would go on sending every sample to it for the rest of the kernel's life,
 * at the cost of the live comms, and each reload would add one more.
 *
 * As a page goes (`pagehide`), it writes which comm it had open in which
 * kernel into the tab's sessionStorage. The next page in the same tab takes
 * that list once as it starts, and the connection to each kernel names
 * those comms in its comm_open's `replaces`, so that the helper closes them.
 * The page also tries to close its comms as it goes, but that reaches the
 * kernel only sometimes, and it is all that a closed tab can do.
 *
 * sessionStorage belongs to one tab and survives a reload. A tab duplicated
 * from a live page gets a copy of it, but the list is written only as a page
 * goes and is taken (removed) as the next one starts, so such a copy holds
 * no list. A duplicate therefore never closes the comms of the page it was
 * copied from.
 */

/** The sessionStorage key; sessionStorage itself is per tab. */
export const COMMS_LEFT_OPEN_KEY = 'jupyterlab-vram:comms-left-open';

/** One comm that a page had open: the kernel it belongs to, and its id. */
export interface OpenComm {
  kernelId: string;
  commId: string;
}

/** The most comm ids named per kernel, and the longest id; these are the protocol's limits. */
export const MAX_REPLACED_COMMS = 64;
const MAX_COMM_ID_LENGTH = 256;

/**
 * Remembers, across reloads of this tab, the comms this page left open in
 * kernels, so that the next helper comm can replace them.
 */
export class CommsLeftOpen {
  /**
   * Takes what the page before this one in the tab left in `storage`. With
   * no storage (null, for example because the browser blocks it), nothing is
   * remembered.
   */
  constructor(storage: Storage | null) {
    this._storage = storage;
    const text = readQuietly(storage);
    for (const [kernelId, commIds] of Object.entries(parse(text))) {
      this._left.set(kernelId, commIds);
    }
  }

  /**
   * Returns the comm ids that an earlier page in this tab left open in kernel
   * `kernelId`. They are given only once: a second call for the same kernel
   * gets none.
   */
  take(kernelId: string): string[] {
    const commIds = this._left.get(kernelId) ?? [];
    this._left.delete(kernelId);
    return commIds;
  }

  /**
   * Adds a comm of this page that is still open in its kernel but that
   * nothing reads any more, because the connection to the kernel was lost.
   * The next comm opened to that kernel names it, or it is passed on as the
   * page goes.
   */
  add(comm: OpenComm): void {
    const commIds = [...(this._left.get(comm.kernelId) ?? []), comm.commId];
    this._left.set(comm.kernelId, commIds.slice(-MAX_REPLACED_COMMS));
  }

  /** Remembers, as the page goes, the comms it has open, for the next page in this tab. */
  remember(open: readonly OpenComm[]): void {
    if (!this._storage) {
      return;
    }
    // Comms left by an earlier page that no connection took (because their
    // notebook was not opened again) are still open in their kernels, so
    // they are passed on too.
    const byKernel: { [kernelId: string]: string[] } = {};
    for (const [kernelId, commIds] of this._left) {
      byKernel[kernelId] = [...commIds];
    }
    for (const { kernelId, commId } of open) {
      (byKernel[kernelId] ??= []).push(commId);
    }
    for (const kernelId of Object.keys(byKernel)) {
      byKernel[kernelId] = byKernel[kernelId].slice(-MAX_REPLACED_COMMS);
    }
    try {
      if (Object.keys(byKernel).length) {
        this._storage.setItem(COMMS_LEFT_OPEN_KEY, JSON.stringify(byKernel));
      } else {
        this._storage.removeItem(COMMS_LEFT_OPEN_KEY);
      }
    } catch {
      // The storage is full or blocked, so the next page cannot close these
      // comms; there is nothing more to do.
    }
  }

  private _storage: Storage | null;
  private _left = new Map<string, string[]>();
}

/** The tab's sessionStorage, or null where the browser blocks it. */
export function tabStorage(): Storage | null {
  try {
    return typeof sessionStorage === 'undefined' ? null : sessionStorage;
  } catch {
    return null; // Reading it throws a SecurityError where storage is disabled.
  }
}

function readQuietly(storage: Storage | null): string | null {
  if (!storage) {
    return null;
  }
  try {
    const text = storage.getItem(COMMS_LEFT_OPEN_KEY);
    storage.removeItem(COMMS_LEFT_OPEN_KEY);
    return text;
  } catch {
    return null;
  }
}

/** Parses what the storage held, keeping only well-formed entries, because any script may have written there. */
function parse(text: string | null): { [kernelId: string]: string[] } {
  let value: unknown;
  try {
    value = text === null ? null : JSON.parse(text);
  } catch {
    return {};
  }
  const result: { [kernelId: string]: string[] } = {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return result;
  }
  for (const [kernelId, commIds] of Object.entries(value)) {
    if (Array.isArray(commIds)) {
      const ids = commIds.filter(
        (id): id is string =>
          typeof id === 'string' &&
          id.length > 0 &&
          id.length <= MAX_COMM_ID_LENGTH
      );
      if (ids.length) {
        result[kernelId] = ids.slice(-MAX_REPLACED_COMMS);
      }
    }
  }
  return result;
}
