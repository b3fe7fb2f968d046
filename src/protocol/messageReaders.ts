/**
 * Access to the readers of the helper's messages (messageReadersLazy.ts),
 * which are fetched with the first kernel rather than with the page: they
 * are most of the protocol's code, and a page that never opens a notebook
 * never reads a message. The helper's delivery steps load them together
 * with themselves (HelperReadiness), and every comm is opened by those
 * steps, so they are always there when a message comes. Code that may run
 * before that (a message seen on IOPub) asks `messageReaders()` and gets
 * null until then.
 */
import type * as Readers from './messageReadersLazy';

/** The module of the message readers (./messageReadersLazy.ts). */
export type MessageReaders = typeof Readers;

let readers: MessageReaders | null = null;
let loading: Promise<MessageReaders> | null = null;

/** The readers, or null while they are not loaded yet. */
export function messageReaders(): MessageReaders | null {
  return readers;
}

/** Loads the readers, fetching their chunk on the first call only. */
export function loadMessageReaders(): Promise<MessageReaders> {
  if (readers) {
    return Promise.resolve(readers);
  }
  if (!loading) {
    loading = import('./messageReadersLazy').then(
      module => (readers = module),
      reason => {
        loading = null; // A failed fetch is tried again next time.
        throw reason;
      }
    );
  }
  return loading;
}

/** Hands over readers already imported (tests, which import them directly). */
export function useMessageReaders(module: MessageReaders): void {
  readers = module;
}

/** Whether comm data claims to be a hello, whatever else it holds. */
export function claimsHello(data: unknown): boolean {
  return (
    typeof data === 'object' &&
    data !== null &&
    (data as { type?: unknown }).type === 'hello'
  );
}
