/**
 * Views follow one model, actions object or recorder at a time, and switch
 * when the active notebook changes, so the handler leaves the previous
 * one's `changed` signal for the next one's.
 */
import type { ISignal, Slot } from '@lumino/signaling';

/** Anything that a view follows, which says what changed through `changed`. */
export interface IChanging<C> {
  readonly changed: ISignal<any, C>;
}

/**
 * Moves `handler`, bound to `thisArg`, from `previous` to `next`, and
 * returns `next` for the caller to keep.
 */
export function follow<C, T extends IChanging<C>>(
  previous: T | null,
  next: T | null,
  handler: Slot<any, C>,
  thisArg: unknown
): T | null {
  previous?.changed.disconnect(handler, thisArg);
  next?.changed.connect(handler, thisArg);
  return next;
}
