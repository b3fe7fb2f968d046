/**
 * Tests for OomDiagnosisView: it shows the newest diagnosis as text with its
 * actions, and it hides once the diagnosis no longer applies.
 */
import { MessageLoop } from '@lumino/messaging';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { KernelMemoryModel } from '../../model/KernelMemoryModel';
import { DEFAULT_SETTINGS } from '../../settings/settings';
import { OomDiagnosisView } from './OomDiagnosisView';
import { makeOomDiagnosis, oomRecord } from '../../testing/cellFixtures';
import { EVIL, GiB, makeHello, wire } from '../../testing/fixtures';

const diagnosis = makeOomDiagnosis;

describe('OomDiagnosisView', () => {
  function setup() {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    const run = jest.fn();
    const view = new OomDiagnosisView({
      settings: { ...DEFAULT_SETTINGS },
      run
    });
    view.model = model;
    Widget.attach(view, document.body);
    MessageLoop.flush();
    return { model, view, run };
  }

  it('shows the newest diagnosis as text, and runs an action on click', () => {
    const { model, view, run } = setup();
    expect(view.node.hidden).toBe(true);
    const label = EVIL;
    model.ingest(
      wire({
        type: 'cells',
        records: [
          oomRecord({
            record_id: 1,
            execution_count: 4,
            oom: diagnosis({
              stale_holders: [{ holder: 'name', label, bytes: GiB }]
            })
          })
        ]
      })
    );
    MessageLoop.flush();
    expect(view.node.hidden).toBe(false);
    const q = (role: string) =>
      Array.from(
        view.node.querySelectorAll<HTMLElement>(`[data-vram-role="${role}"]`)
      );
    expect(q('oom-headline')[0].textContent).toContain(
      'Cell [4] ran out of GPU 0 memory'
    );
    expect(q('oom-cause').map(n => n.dataset.vramCause)).toEqual([
      'fragmentation',
      'stale_references',
      'other_processes'
    ]);
    expect(view.node.querySelector('img')).toBeNull();
    expect(q('oom-cause')[1].textContent).toContain(label);
    const buttons = q('oom-action');
    expect(buttons[0].dataset.vramAction).toBe('free-memory');
    buttons[0].click();
    expect(run).toHaveBeenCalledWith(
      expect.objectContaining({ id: 'free-memory' })
    );
    view.dispose();
  });

  it("follows this page's deletes: a deleted holder is no longer offered", () => {
    const { model, view } = setup();
    model.setState('live');
    const holders = [
      { holder: 'name', label: 'activations', bytes: 3 * GiB },
      { holder: 'name', label: 'cache', bytes: 1 * GiB }
    ];
    model.ingest(
      wire({
        type: 'cells',
        records: [
          oomRecord({
            record_id: 1,
            execution_count: 4,
            oom: diagnosis({ stale_holders: holders })
          })
        ]
      })
    );
    MessageLoop.flush();
    const deleteButton = () =>
      view.node.querySelector<HTMLElement>(
        '[data-vram-role="oom-action"][data-vram-action="delete-holders"]'
      );
    expect(deleteButton()!.textContent).toBe(
      'Delete the largest holders (activations, cache)'
    );
    const changed = new Signal<any, string>({});
    const actions: any = { changed, lastOutcome: null };
    view.actions = actions;
    const deleted = (names: string[]) => {
      actions.lastOutcome = {
        kind: 'delete',
        status: 'done',
        result: { deleted: names, refused: [], cleared: [], still_alive: [] }
      };
      changed.emit('outcome');
      MessageLoop.flush();
    };
    // Only a delete that succeeded removes holders from the offer, so a free
    // outcome or a failed delete leaves the button as it was.
    actions.lastOutcome = { kind: 'free', status: 'done', result: null };
    changed.emit('outcome');
    actions.lastOutcome = { kind: 'delete', status: 'failed', result: null };
    changed.emit('outcome');
    MessageLoop.flush();
    expect(deleteButton()!.textContent).toBe(
      'Delete the largest holders (activations, cache)'
    );
    deleted(['activations']);
    expect(deleteButton()!.textContent).toBe(
      'Delete the largest holders (cache)'
    );
    // MemoryActions.redescribe repeats the same reply when the units change, and
    // attaching the actions anew (on a notebook switch) meets the last reply
    // again. Neither is a new delete, so the offer must not shrink.
    const earlier = {
      deleted: ['cache'],
      refused: [],
      cleared: [],
      still_alive: []
    };
    actions.lastOutcome = { kind: 'delete', status: 'done', result: earlier };
    view.actions = null;
    view.actions = actions;
    changed.emit('outcome');
    actions.lastOutcome = { ...actions.lastOutcome };
    changed.emit('outcome');
    MessageLoop.flush();
    expect(deleteButton()!.textContent).toBe(
      'Delete the largest holders (cache)'
    );
    deleted(['cache']);
    expect(deleteButton()).toBeNull();
    view.dispose();
    // Disposing disconnects the actions, so another notebook's deletes cannot
    // change this view.
    expect(view.actions).toBeNull();
  });

  it('hides a diagnosis once its kernel process is gone (restart, death, another process)', () => {
    const { model, view } = setup();
    model.ingest(
      wire({
        type: 'cells',
        records: [oomRecord({ record_id: 3, oom: diagnosis() })]
      })
    );
    MessageLoop.flush();
    expect(view.node.hidden).toBe(false);
    model.setState('kernel-starting', 'Restarting\u2026');
    MessageLoop.flush();
    expect(view.node.hidden).toBe(true); // The process that failed is gone.
    model.ingest(wire(makeHello({ pid: 9999, record_series: 'series-2' })));
    MessageLoop.flush();
    // The kernel is live again, but in another process, which has nothing to
    // diagnose.
    expect(view.node.hidden).toBe(true);
    // Only the view hides the diagnosis; the record itself stays in the history.
    expect(model.cells.entries).toHaveLength(1);
    model.ingest(
      wire({
        type: 'cells',
        records: [oomRecord({ record_id: 1, oom: diagnosis() })]
      })
    );
    MessageLoop.flush();
    expect(view.node.hidden).toBe(false);
    view.dispose();
  });

  it('hides a dismissed diagnosis until a newer cell dies of OOM', () => {
    const { model, view } = setup();
    model.ingest(
      wire({
        type: 'cells',
        records: [oomRecord({ record_id: 1, oom: diagnosis() })]
      })
    );
    MessageLoop.flush();
    view.node
      .querySelector<HTMLElement>('[data-vram-role="oom-dismiss"]')!
      .click();
    MessageLoop.flush();
    expect(view.node.hidden).toBe(true);
    model.ingest(
      wire({
        type: 'cells',
        records: [oomRecord({ record_id: 2, oom: diagnosis() })]
      })
    );
    MessageLoop.flush();
    expect(view.node.hidden).toBe(false);
    expect(view.node.dataset.vramRecord).toMatch(/:2$/);
    view.dispose();
  });

  it("keeps another notebook's diagnosis shown after one with the same key is dismissed", () => {
    const { model, view } = setup();
    const other = new KernelMemoryModel({ historyCapacity: 10 });
    other.ingest(wire(makeHello()));
    for (const m of [model, other]) {
      m.ingest(
        wire({
          type: 'cells',
          records: [oomRecord({ record_id: 1, oom: diagnosis() })]
        })
      );
    }
    MessageLoop.flush();
    const key = view.node.dataset.vramRecord;
    view.node
      .querySelector<HTMLElement>('[data-vram-role="oom-dismiss"]')!
      .click();
    MessageLoop.flush();
    expect(view.node.hidden).toBe(true);
    // The other model's record has the same key, but the dismissal belongs to
    // the first model, so it must not hide this one.
    view.model = other;
    MessageLoop.flush();
    expect(view.node.dataset.vramRecord).toBe(key);
    expect(view.node.hidden).toBe(false);
    view.model = model;
    MessageLoop.flush();
    expect(view.node.hidden).toBe(true);
    view.dispose();
    other.dispose();
  });
});
