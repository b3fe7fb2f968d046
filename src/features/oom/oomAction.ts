/**
 * The shape of one fix that the out-of-memory assistant offers: a button
 * whose click runs one command or several in order. A module of its own so
 * that the modules that make fixes (oomActions.ts, oomChildActions.ts) and
 * the view share it without importing each other.
 */
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';

/** One step of an out-of-memory fix: a command and its arguments. */
export interface OomActionStep {
  command: string;
  args?: ReadonlyPartialJSONObject;
}

/** One fix that the out-of-memory assistant offers as a button. */
export interface OomAction {
  /** A stable id, which tests and the DOM's data attributes use. */
  id: string;
  label: string;
  /** What it is expected to gain, in words. */
  gain: string;
  steps: OomActionStep[];
}
