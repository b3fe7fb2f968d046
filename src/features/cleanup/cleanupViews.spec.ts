import { Widget } from '@lumino/widgets';

import { MemoryActions } from './MemoryActions';
import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { makeDeletePlan } from './deletePlan';
import {
  createDeleteDialogBody,
  deleteDialogAccept,
  deleteDialogTitle,
  expectedBytesText
} from './DeleteDialogBody';
import { HoldersView } from './HoldersView';
import { loadFullSidebar } from '../../testing/sidebarFixtures';
import {
  makeEntry,
  makeHidden,
  makeListing
} from '../../testing/cleanupFixtures';
import { EVIL, FakeMonitor, GiB, MiB } from '../../testing/fixtures';
import { settle } from '../../testing/fakeKernel';
import { DEFAULT_SETTINGS } from '../../settings/settings';

function liveActions(listing = makeListing()) {
  const model = new KernelMemoryModel({ historyCapacity: 10 });
  model.setState('live');
  const connection = {
    freeMemory: jest.fn(),
    inspect: jest.fn(async () => listing),
    deleteHolders: jest.fn()
  };
  const actions = new MemoryActions({ connection: connection as any, model });
  return { model, actions, connection };
}

describe('HoldersView', () => {
  let view: HoldersView;
  let onDelete: jest.Mock;

  beforeEach(() => {
    onDelete = jest.fn();
    view = new HoldersView({ settings: DEFAULT_SETTINGS, onDelete });
    Widget.attach(view, document.body);
  });

  afterEach(() => view.dispose());

  it('renders kernel text as text, never as HTML', async () => {
    const listing = makeListing({
      entries: [
        makeEntry({
          name: EVIL,
          summary: EVIL,
          type_name: EVIL,
          shared_with: [EVIL],
          output_cache_refs: ['Out[3]', '_']
        }),
        makeEntry({
          name: 'locked',
          deletable: false,
          refusal: EVIL,
          total_bytes: 1
        })
      ],
      hidden: [makeHidden({ label: EVIL, summary: EVIL, warning: EVIL })]
    });
    const { actions } = liveActions(listing);
    await actions.inspect();
    view.actions = actions;
    view.renderNow();
    expect(view.node.querySelector('img')).toBeNull();
    const row = Array.from(
      view.node.querySelectorAll('[data-vram-role="holder-entry"]')
    ).find(n => (n as HTMLElement).dataset.vramName === EVIL) as HTMLElement;
    expect(row).toBeDefined();
    expect(
      row.querySelector('[data-vram-role="holder-name"]')!.textContent
    ).toBe(EVIL);
    expect(row.textContent).toContain(
      `shares storage with ${EVIL}, counted here`
    );
    expect(row.textContent).toContain('also in Out[3], _');
    const hidden = view.node.querySelector(
      '[data-vram-role="hidden-holder"][data-vram-holder="last_traceback"]'
    )!;
    expect(hidden.textContent).toContain(EVIL);
    const locked = view.node.querySelector(
      '[data-vram-role="holder-entry"][data-vram-name="locked"] input[type=checkbox]'
    ) as HTMLInputElement;
    expect(locked.disabled).toBe(true);
    expect(locked.title).toBe(EVIL);
  });

  it('lets a long dotted type name wrap after a dot, and copy as the exact name', async () => {
    const { actions } = liveActions(
      makeListing({
        entries: [
          makeEntry({
            name: 'model',
            kind: 'module',
            type_name: 'torch.nn.modules.container.Sequential',
            summary: 'Sequential: 3 modules, 1.5 M params'
          })
        ],
        hidden: []
      })
    );
    await actions.inspect();
    view.actions = actions;
    view.renderNow();
    const summary = view.node.querySelector<HTMLElement>(
      '[data-vram-role="holder-entry"][data-vram-name="model"] [data-vram-role="holder-summary"]'
    )!;
    expect(summary.textContent).toBe(
      'torch.nn.modules.container.Sequential: 3 modules, 1.5 M params'
    );
    // There is a break opportunity after each dot of the type, but none
    // inside a word and none in "1.5".
    const pieces = Array.from(summary.childNodes).map(n =>
      n.nodeName === 'WBR' ? '|' : n.textContent
    );
    expect(pieces.join('')).toBe(
      'torch.|nn.|modules.|container.|Sequential: 3 modules, 1.5 M params'
    );
    // No zero-width spaces are used, because they would be copied along with
    // the text.
    expect(summary.innerHTML).not.toMatch(/\u200b|&#8203;/);
  });

  it('says what a 0 B alias keeps alive and where it is counted', async () => {
    const { actions } = liveActions();
    await actions.inspect();
    view.actions = actions;
    view.renderNow();
    const note = (name: string) =>
      view.node.querySelector(
        `[data-vram-role="holder-entry"][data-vram-name="${name}"] [data-vram-role="holder-note"]`
      )!.textContent;
    expect(note('b')).toBe(
      'keeps 256 MiB alive that a counts (shared storage)'
    );
    expect(note('a')).toBe('shares storage with b, counted here');
  });

  it('says a name sized in part holds at least its figure', async () => {
    const { actions } = liveActions(
      makeListing({
        entries: [
          makeEntry({ name: 'dataset', truncated: true }),
          makeEntry({ name: 'x' })
        ],
        hidden: []
      })
    );
    await actions.inspect();
    view.actions = actions;
    view.renderNow();
    const row = (name: string) =>
      view.node.querySelector(
        `[data-vram-role="holder-entry"][data-vram-name="${name}"]`
      )!;
    expect(
      row('dataset').querySelector('.jp-vram-Holder-bytes')!.textContent
    ).toBe('\u2265 4 MiB');
    expect(row('dataset').textContent).toContain(
      'sized in part: too large to walk whole, it may hold more'
    );
    expect(row('x').querySelector('.jp-vram-Holder-bytes')!.textContent).toBe(
      '4 MiB'
    );
  });

  it('ticks into the selection, enables Delete, and asks the command', async () => {
    const { actions } = liveActions();
    await actions.inspect();
    view.actions = actions;
    view.renderNow();
    const del = view.node.querySelector(
      '[data-vram-role="delete-selected"]'
    ) as HTMLButtonElement;
    expect(del.disabled).toBe(true);
    const box = view.node.querySelector(
      '[data-vram-role="holder-entry"][data-vram-name="a"] input'
    ) as HTMLInputElement;
    box.checked = true;
    box.dispatchEvent(new Event('change'));
    expect(Array.from(actions.selectedNames)).toEqual(['a']);
    view.renderNow();
    expect(del.disabled).toBe(false);
    expect(del.textContent).toBe('Delete selected (1)');
    del.click();
    expect(onDelete).toHaveBeenCalledTimes(1);
  });

  it('keeps the keyboard focus on a ticked checkbox (the rows are rebuilt)', async () => {
    const { actions } = liveActions();
    await actions.inspect();
    view.actions = actions;
    view.renderNow();
    const boxOf = (selector: string) =>
      view.node.querySelector(
        `${selector} input[type=checkbox]`
      ) as HTMLInputElement;
    const box = boxOf('[data-vram-role="holder-entry"][data-vram-name="a"]');
    box.focus();
    box.checked = true;
    box.dispatchEvent(new Event('change'));
    view.renderNow();
    expect(document.activeElement).toBe(
      boxOf('[data-vram-role="holder-entry"][data-vram-name="a"]')
    );
    expect(
      boxOf('[data-vram-role="holder-entry"][data-vram-name="a"]').checked
    ).toBe(true);

    const hidden = boxOf('[data-vram-role="hidden-holder"]');
    const holder = (hidden.closest('li') as HTMLElement).dataset.vramHolder;
    hidden.focus();
    hidden.checked = true;
    hidden.dispatchEvent(new Event('change'));
    view.renderNow();
    expect(document.activeElement).toBe(
      boxOf(`[data-vram-role="hidden-holder"][data-vram-holder="${holder}"]`)
    );
  });

  it('refreshes the listing and keeps only what is still deletable selected', async () => {
    const { actions, connection } = liveActions();
    await actions.inspect();
    actions.setNameSelected('a', true);
    actions.setNameSelected('model', true);
    const next = makeListing({ listing_id: 'L2' });
    next.entries = next.entries.filter(e => e.name !== 'a');
    connection.inspect.mockResolvedValueOnce(next);
    view.actions = actions;
    view.renderNow();
    (
      view.node.querySelector(
        '[data-vram-role="inspect-refresh"]'
      ) as HTMLElement
    ).click();
    await settle();
    expect(actions.listing?.listing_id).toBe('L2');
    expect(Array.from(actions.selectedNames)).toEqual(['model']);
  });

  it('explains a malformed listing', async () => {
    const { actions, connection } = liveActions();
    connection.inspect.mockRejectedValueOnce(
      new Error(
        "The kernel helper sent a malformed 'inspect' reply: inspect.entries: expected an array"
      )
    );
    view.actions = actions;
    await actions.inspect();
    view.renderNow();
    expect(
      view.node.querySelector('[data-vram-role="holders-status"]')!.textContent
    ).toContain("malformed 'inspect' reply");
  });
});

describe('delete dialog body', () => {
  it('is titled with what its button will do', () => {
    const listing = makeListing();
    expect(
      deleteDialogTitle(
        makeDeletePlan(listing, ['a', 'model'], ['last_traceback'])!
      )
    ).toBe('Delete 2 variables and clear 1 hidden reference?');
    expect(
      deleteDialogTitle(makeDeletePlan(listing, [], ['last_traceback'])!)
    ).toBe('Clear 1 hidden reference?');
    expect(deleteDialogTitle(makeDeletePlan(listing, ['a'], [])!)).toBe(
      'Delete 1 variable?'
    );
    // The button uses the same verb as the title.
    expect(
      deleteDialogAccept(makeDeletePlan(listing, [], ['last_traceback'])!)
    ).toBe('Clear');
    expect(
      deleteDialogAccept(makeDeletePlan(listing, ['a'], ['last_traceback'])!)
    ).toBe('Delete');
  });

  it('lists exactly the chosen names and holders, the warning and the bytes', () => {
    const plan = makeDeletePlan(
      makeListing(),
      ['a', 'model'],
      ['last_traceback']
    )!;
    const body = createDeleteDialogBody(plan, 'binary');
    const names = Array.from(
      body.querySelectorAll('[data-vram-role="delete-plan-name"]')
    ).map(n => (n as HTMLElement).dataset.vramName);
    expect(names).toEqual(['model', 'a']);
    const hidden = Array.from(
      body.querySelectorAll('[data-vram-role="delete-plan-hidden"]')
    ).map(n => (n as HTMLElement).dataset.vramHolder);
    expect(hidden).toEqual(['last_traceback']);
    expect(
      body.querySelector('[data-vram-role="delete-plan-warning"]')!.textContent
    ).toBe('Clearing the traceback disables %debug for that error');
    const expected = body.querySelector(
      '[data-vram-role="delete-plan-expected"]'
    ) as HTMLElement;
    // The 256 MiB of a stay, because b is left unticked and keeps them alive.
    expect(expected.dataset.vramBytes).toBe(String(GiB + MiB));
    expect(expected.dataset.vramAtMost).toBe('true');
    expect(expected.textContent).toBe(
      'Memory expected back: at most 1 GiB (cuda:0 1 GiB \u00b7 cpu 1 MiB)'
    );
    expect(body.textContent).toContain('a shares storage with b, which stays');
  });

  it('says "about" without aliases and keeps names as text', () => {
    const listing = makeListing({
      entries: [makeEntry({ name: EVIL, summary: EVIL })],
      hidden: []
    });
    const plan = makeDeletePlan(listing, [EVIL], [])!;
    const body = createDeleteDialogBody(plan, 'binary');
    expect(body.querySelector('img')).toBeNull();
    expect(body.textContent).toContain(EVIL);
    expect(expectedBytesText(plan, 'binary')).toBe(
      'Memory expected back: about 4 MiB (cuda:0 4 MiB)'
    );
    expect(
      body.querySelector('[data-vram-role="delete-plan-hidden"]')
    ).toBeNull();
  });
});

describe('the delete dialog when nothing is expected back', () => {
  it('says none and why (not "at most 0 B" and "less may come back"), and does not promise empty_cache', () => {
    const listing = makeListing({
      entries: [makeEntry({ name: 't' })],
      hidden: []
    });
    const plan = {
      ...makeDeletePlan(listing, ['t'], [])!,
      expected: {
        bytes: 0,
        byDevice: {},
        atMost: true,
        reasons: ['t shares storage with alias, which stays']
      }
    };
    const body = createDeleteDialogBody(plan, 'binary');
    expect(expectedBytesText(plan, 'binary')).toBe(
      'Memory expected back: none'
    );
    expect(body.textContent).toContain(
      'Why: t shares storage with alias, which stays.'
    );
    expect(body.textContent).not.toContain('Less may come back');
    expect(body.textContent).toContain(
      'torch.cuda.empty_cache() where PyTorch has initialised CUDA'
    );
  });
});

describe('MemorySidebar cleanup parts', () => {
  it('has a Holders tab; the cleanup bar shows on Memory and Holders', async () => {
    const sidebar = await loadFullSidebar({ monitor: new FakeMonitor() });
    const tab = sidebar.node.querySelector(
      '[data-vram-role="holders-tab"]'
    ) as HTMLButtonElement;
    tab.click();
    expect(sidebar.tab).toBe('holders');
    expect(sidebar.holders.isHidden).toBe(false);
    expect(sidebar.actionsBar.isHidden).toBe(false);
    expect(
      sidebar.node.querySelector('[data-vram-role="holders-view"]')
    ).not.toBeNull();
    sidebar.showTab('cells');
    expect(sidebar.actionsBar.isHidden).toBe(true);
    expect(sidebar.holders.isHidden).toBe(true);
    sidebar.showTab('memory');
    expect(sidebar.actionsBar.isHidden).toBe(false);
    const buttons = sidebar.node.querySelectorAll(
      '[data-vram-role="action-bar"] button'
    );
    expect(buttons.length).toBe(4);
    expect(
      Array.from(buttons).every(b => (b as HTMLButtonElement).disabled)
    ).toBe(true);
    sidebar.dispose();
  });
});
