/**
 * Where the monitoring of one notebook's kernel stands, with the sentence the
 * panel shows for it. Every state that is not 'live' says why no figures are
 * coming, so the user is never left with an empty panel and no reason.
 *
 *   no-notebook ──► kernel-starting ──► bootstrapping ──► live
 *                      │ ▲   │              │    │          │
 *                      ▼ │   │              │    │          │
 *                  overheard │              │    │          │
 *   (figures sent to other   │              │    │          │
 *    pages' comms, while a   │              │    │          │
 *    cell delays this page's)│              │    │          │
 *                        │                  │    │          │
 *                        ▼                  │    ▼          ▼
 *                   non-python              │  protocol-  disconnected
 *                                           ▼  mismatch   (dead / lost;
 *                                      helper-failed       back to
 *                                                          kernel-starting
 *                                                          on restart)
 */
import { trans } from '../text/translation';

/** What the panel says of the active notebook's kernel: whether it is watched, and if not, why. */
export type MonitorState =
  | 'no-notebook'
  | 'kernel-starting'
  | 'non-python'
  | 'bootstrapping'
  | 'overheard'
  | 'helper-failed'
  | 'protocol-mismatch'
  | 'live'
  | 'disconnected';

/**
 * Every monitor state, listed once, for code that must go through all of them.
 */
export const MONITOR_STATES: readonly MonitorState[] = [
  'no-notebook',
  'kernel-starting',
  'non-python',
  'bootstrapping',
  'overheard',
  'helper-failed',
  'protocol-mismatch',
  'live',
  'disconnected'
];

/** The default sentence for a state; callers may pass a more precise one. */
export function describeState(state: MonitorState, detail?: string): string {
  switch (state) {
    case 'no-notebook':
      return trans.__('Open a notebook to see the memory its kernel holds.');
    case 'kernel-starting':
      return detail ?? trans.__('Waiting for the kernel to start.');
    case 'non-python':
      return detail
        ? trans.__(
            "This notebook's kernel runs %1; GPU memory monitoring needs a Python kernel.",
            detail
          )
        : trans.__(
            "This notebook's kernel runs another language; GPU memory monitoring needs a Python kernel."
          );
    case 'bootstrapping':
      return (
        detail ?? trans.__('Starting the memory helper in the kernel\u2026')
      );
    case 'overheard':
      return (
        detail ??
        trans.__(
          "Live, by way of another connection to the kernel: a running cell delays this page's own, which opens when the cell finishes (until then, no requests)."
        )
      );
    case 'helper-failed':
      return detail
        ? trans.__(
            'The memory helper could not start in the kernel: %1',
            detail
          )
        : trans.__('The memory helper could not start in the kernel.');
    case 'protocol-mismatch':
      return detail
        ? trans.__(
            "The kernel's memory helper speaks protocol %1, which this extension does not understand. Restart the kernel, or reload the page if the extension was just updated.",
            detail
          )
        : trans.__(
            "The kernel's memory helper speaks protocol of an unknown version, which this extension does not understand. Restart the kernel, or reload the page if the extension was just updated."
          );
    case 'live':
      return detail ?? trans.__('Live: receiving samples from the kernel.');
    case 'disconnected':
      return detail ?? trans.__('Not connected to the kernel.');
  }
}

/**
 * The state's sentence for a helper whose hello does not parse, because it
 * is another version's or not ours.
 */
export function unreadableHelloText(error: string): string {
  return trans.__(
    "The kernel's memory helper introduced itself in a form this extension cannot read (%1). Restart the kernel, or reload the page if the extension was just updated.",
    error
  );
}

/**
 * Whether the figures shown are current in this state: live, or heard on
 * another page's connection. In the other states they are the last ones
 * that a kernel sent.
 */
export function figuresAreCurrent(state: MonitorState): boolean {
  return state === 'live' || state === 'overheard';
}
