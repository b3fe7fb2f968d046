/**
 * The steps of the delete command: the listing it plans from, the question
 * to the user, the request and the result. The listing is made again when
 * the names do not come from the listing on screen, or when cells ran after
 * that listing. cleanupCommands.ts registers the command,
 * keeps it to one delete at a time, and loads this module with the first
 * delete rather than with the page.
 */
import type { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import type { Notify } from '../../ui/notify';
import type { DeletePlan } from './deletePlan';
import type { ActionOutcome } from './actionOutcome';
import type { MemoryActions } from './MemoryActions';
import { trans } from '../../text/translation';

/** What the flow asks of the command that runs it. */
export interface IDeleteHost {
  notify: Notify;
  notifyOutcome: (outcome: ActionOutcome) => void;
  /** Show the Holders tab of the sidebar. */
  showHolders: () => void;
  /**
   * Ask the user in the dialog that lists what goes. Resolves to true when
   * the user wants the delete.
   */
  confirmDelete: (plan: DeletePlan) => Promise<boolean>;
}

function stringArray(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((v): v is string => typeof v === 'string')
    : [];
}

/**
 * Runs the delete command: plans the delete, asks the user to confirm it, sends
 * it, and resolves to how it ended, or to null when nothing was sent.
 */
export async function deleteVariables(
  memoryActions: MemoryActions,
  args: ReadonlyPartialJSONObject,
  { notify, notifyOutcome, showHolders, confirmDelete }: IDeleteHost
): Promise<ActionOutcome | null> {
  const names = stringArray(args.names);
  const hidden = stringArray(args.hidden);
  const named = Array.isArray(args.names) || Array.isArray(args.hidden);
  // `fresh` is true when the names come from elsewhere, such as the OOM
  // diagnosis, rather than from the listing on screen; they are then looked
  // up in a new listing. A listing that cells ran after is made again too,
  // and what it names is checked in the new one.
  if (
    (named && (!memoryActions.listing || args.fresh === true)) ||
    memoryActions.listingStale
  ) {
    if (!(await memoryActions.inspect())) {
      showHolders();
      notify(
        'error',
        trans.__(
          '%1. Nothing was deleted.',
          memoryActions.listingError ??
            trans.__('Could not list what holds memory')
        )
      );
      return null;
    }
  }
  const plan: DeletePlan | null = named
    ? await memoryActions.planFor(names, hidden)
    : await memoryActions.planSelection();
  if (!plan) {
    showHolders();
    if (!memoryActions.listing && !memoryActions.inspecting) {
      void memoryActions.inspect();
    }
    if (names.length || hidden.length) {
      // The names come from the out-of-memory diagnosis, which describes the
      // moment the cell failed, so what it named may be gone since.
      const text = await import('./cleanupResultText');
      const what = text.listNames([
        ...names,
        ...hidden.map(text.hiddenHolderText)
      ]);
      notify(
        'info',
        trans._n(
          'Nothing left to delete: %2 no longer holds memory in the kernel (deleted or cleared since). The Holders tab shows what does now.',
          'Nothing left to delete: %2 no longer hold memory in the kernel (deleted or cleared since). The Holders tab shows what does now.',
          names.length + hidden.length,
          what
        )
      );
      return null;
    }
    notify(
      'info',
      trans.__(
        'Nothing to delete: tick variables or hidden references in the Holders tab of the GPU memory panel first.'
      )
    );
    return null;
  }
  if (!(await confirmDelete(plan))) {
    return null;
  }
  // There is no "Queued" note here. A delete waits only for a cell started
  // while its question was open, and that cell makes its listing stale, so
  // nothing is then sent (see MemoryActions.deleteHolders) and the result
  // says so.
  const outcome = await memoryActions.deleteHolders(plan);
  notifyOutcome(outcome);
  return outcome;
}
