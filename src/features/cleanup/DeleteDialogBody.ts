/**
 * The body of the delete confirmation dialog. It says exactly what will be
 * deleted (names, and hidden references with their warnings) and the bytes
 * to expect back, "at most" when aliases may keep some of them alive. Names
 * come from the kernel, so they go into the DOM as text only.
 *
 * Test hooks: `[data-vram-role="delete-plan"]`,
 * `[data-vram-role="delete-plan-name"]` (data-vram-name),
 * `[data-vram-role="delete-plan-hidden"]` (data-vram-holder),
 * `[data-vram-role="delete-plan-warning"]`,
 * `[data-vram-role="delete-plan-expected"]` (data-vram-bytes, data-vram-at-most).
 */
import {
  ByteUnits,
  formatBytes,
  formatBytesByDevice,
  formatCount
} from '../../text/format';
import { DeletePlan } from './deletePlan';
import { confirmDialog } from '../../ui/confirmDialog';
import { element, setBytesData } from '../../ui/dom';
import { trans } from '../../text/translation';

/**
 * Says how many bytes the delete should give back, for example "Expected
 * back: about 1.2 GiB (cuda:0 1 GiB · cpu 200 MiB)".
 */
export function expectedBytesText(plan: DeletePlan, units: ByteUnits): string {
  const { bytes, byDevice, atMost } = plan.expected;
  if (bytes === 0) {
    return trans.__('Memory expected back: none');
  }
  const amount = atMost
    ? trans.__('at most %1', formatBytes(bytes, units))
    : trans.__('about %1', formatBytes(bytes, units));
  return Object.keys(byDevice).length
    ? trans.__(
        'Memory expected back: %1 (%2)',
        amount,
        formatBytesByDevice(byDevice, units)
      )
    : trans.__('Memory expected back: %1', amount);
}

/** Builds the body of the delete confirmation dialog for a plan. */
export function createDeleteDialogBody(
  plan: DeletePlan,
  units: ByteUnits
): HTMLElement {
  const root = element('div', 'jp-vram-DeletePlan', { role: 'delete-plan' });
  const section = (heading: string, items: HTMLElement[]) => {
    if (items.length) {
      const list = element('ul', 'jp-vram-DeletePlan-list');
      list.append(...items);
      root.append(
        element('div', 'jp-vram-DeletePlan-heading', { text: heading }),
        list
      );
    }
  };
  section(
    trans.__('Delete these variables (and their copies in Out[] and _):'),
    plan.entries.map(entry => {
      const item = element('li', 'jp-vram-DeletePlan-item', {
        role: 'delete-plan-name'
      });
      item.dataset.vramName = entry.name;
      item.append(
        element('span', 'jp-vram-DeletePlan-name', { text: entry.name }),
        document.createTextNode(
          ` \u2014 ${entry.summary} (${formatBytes(entry.total_bytes, units)})`
        )
      );
      return item;
    })
  );
  section(
    trans.__('Clear these hidden references:'),
    plan.hidden.map(holder => {
      const item = element('li', 'jp-vram-DeletePlan-item', {
        role: 'delete-plan-hidden',
        text: `${holder.label} (${formatBytes(holder.total_bytes, units)})`
      });
      item.dataset.vramHolder = holder.holder;
      return item;
    })
  );
  for (const warning of plan.warnings) {
    root.appendChild(
      element('div', 'jp-vram-DeletePlan-warning', {
        role: 'delete-plan-warning',
        text: warning
      })
    );
  }
  const expected = element('div', 'jp-vram-DeletePlan-expected', {
    role: 'delete-plan-expected',
    text: expectedBytesText(plan, units)
  });
  setBytesData(expected, plan.expected.bytes);
  expected.dataset.vramAtMost = String(plan.expected.atMost);
  root.appendChild(expected);
  // When nothing is expected back, the reasons explain why nothing comes
  // back rather than why less does.
  const none = plan.expected.bytes === 0;
  for (const reason of plan.expected.reasons) {
    root.appendChild(
      element('div', 'jp-vram-DeletePlan-reason', {
        text: none
          ? trans.__('Why: %1.', reason)
          : trans.__('Less may come back: %1.', reason)
      })
    );
  }
  root.appendChild(
    element('div', 'jp-vram-DeletePlan-after', {
      text: trans.__(
        'Then gc.collect() runs, and torch.cuda.empty_cache() where PyTorch has initialised CUDA. This cannot be undone.'
      )
    })
  );
  return root;
}

/**
 * The dialog's title, which says what its button will do, for example
 * "Delete 2 variables?", "Clear 1 hidden reference?" or "Delete 1 variable
 * and clear 1 hidden reference?".
 */
export function deleteDialogTitle(plan: DeletePlan): string {
  const variables = plan.entries.length;
  const hidden = plan.hidden.length;
  const variablesText = trans._n(
    '%2 variable',
    '%2 variables',
    variables,
    formatCount(variables)
  );
  const hiddenText = trans._n(
    '%2 hidden reference',
    '%2 hidden references',
    hidden,
    formatCount(hidden)
  );
  if (variables && hidden) {
    return trans.__('Delete %1 and clear %2?', variablesText, hiddenText);
  }
  if (variables) {
    return trans.__('Delete %1?', variablesText);
  }
  if (hidden) {
    return trans.__('Clear %1?', hiddenText);
  }
  return trans.__('Delete nothing?');
}

/**
 * Ask the user to confirm `plan` in a JupyterLab dialog. Resolves to true
 * when they press Delete, or Clear when only hidden references go (the
 * button is `.jp-Dialog .jp-mod-accept`).
 */
export async function confirmDeleteDialog(
  plan: DeletePlan,
  units: ByteUnits
): Promise<boolean> {
  return confirmDialog({
    title: deleteDialogTitle(plan),
    body: createDeleteDialogBody(plan, units),
    accept: deleteDialogAccept(plan),
    acceptAriaLabel: trans.__('%1 and free memory', deleteDialogAccept(plan))
  });
}

/**
 * The accept button's word. It matches the title's verb, so it is "Clear"
 * when only hidden references go.
 */
export function deleteDialogAccept(plan: DeletePlan): string {
  return plan.entries.length === 0 && plan.hidden.length > 0
    ? trans.__('Clear')
    : trans.__('Delete');
}
