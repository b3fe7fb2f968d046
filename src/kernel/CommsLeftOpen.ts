/**
 * The comms a page leaves open in kernels when it goes away (a reload, a
 * navigation, a closed tab). A page sends no `comm_close` as it goes, so the
 * kernel cannot tell such a comm from a live one: the helper would go on
 * sending every sample to it, at the cost of a live one, for the kernel's
 * life, one more comm per reload.
 *
 * As a page goes (`pagehide`), it writes which comm it had open in which
 * kernel into the tab's sessionStorage; the next page in the same tab takes
 * that once as it starts, and the connection to each kernel names those
 * comms in its comm_open's `replaces`, so the helper closes them. (The page
 * also tries to close its comms as it goes; that reaches the kernel only
 * sometimes, and is all a closed tab can do.)
 *
 * sessionStorage belongs to one tab and survives a reload. A tab duplicated
 * from a live page gets a copy of it, but the list is only written as a page
 * goes and is taken (removed) as the next one starts, so such a copy holds
 * none: a duplicate never closes the comms of the page it was copied from.
 */

/** The sessionStorage key (one per tab). */
export const COMMS_LEFT_OPEN_KEY = 'jupyterlab-vram:comms-left-open';

/** One comm a page had open: the kernel it goes to and its id. */
export interface OpenComm {
  kernelId: string;
  commId: string;
}

/** At most this many comm ids are named per kernel, each at most this long (the protocol's limits). */
export const MAX_REPLACED_COMMS = 64;
const MAX_COMM_ID_LENGTH = 256;

/**
 * Remembers, across reloads of this tab, the comms this page left open in
 * kernels, so that the next helper comm can replace them.
 */
export class CommsLeftOpen {
  /**
   * Takes what the page before this one in the tab left in `storage` (null:
   * no storage, e.g. blocked by the browser: nothing is remembered).
   */
  constructor(storage: Storage | null) {
    this._storage = storage;
    const text = readQuietly(storage);
    for (const [kernelId, commIds] of Object.entries(parse(text))) {
      this._left.set(kernelId, commIds);
    }
  }

  /**
   * The comm ids an earlier page in this tab left open in kernel `kernelId`;
   * given once (a second call for the same kernel gets none).
   */
  take(kernelId: string): string[] {
    const commIds = this._left.get(kernelId) ?? [];
    this._left.delete(kernelId);
    return commIds;
  }

  /**
   * A comm of this page still open in kernel `kernelId` that nothing reads
   * any more (the connection to the kernel was lost): named by the next
   * comm opened to that kernel, or passed on as the page goes.
   */
  add(comm: OpenComm): void {
    const commIds = [...(this._left.get(comm.kernelId) ?? []), comm.commId];
    this._left.set(comm.kernelId, commIds.slice(-MAX_REPLACED_COMMS));
  }

  /** As the page goes: remember the comms it has open, for the next page in this tab. */
  remember(open: readonly OpenComm[]): void {
    if (!this._storage) {
      return;
    }
    // Comms left by an earlier page that no connection took (a notebook not
    // opened again) are still open in their kernels: pass them on too.
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
      // Storage full or blocked: the next page cannot close these comms.
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
    return null; // a SecurityError where storage is disabled
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

/** What the storage held, keeping only well-formed entries (anything may have written there). */
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
