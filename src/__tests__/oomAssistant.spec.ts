import { MessageLoop } from '@lumino/messaging';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { CommandIDs } from '../commandIds';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { oomActions, RESTART_KERNEL_COMMAND } from '../model/oomActions';
import { explainOom } from '../model/oomExplanation';
import { oomFiguresNow } from '../model/oomNow';
import { parseCellRecord } from '../cellProtocol';
import { UNKNOWN_TEXT } from '../format';
import { OomDiagnosis } from '../oomProtocol';
import { DEFAULT_SETTINGS } from '../settings';
import { OomDiagnosisView } from '../views/OomDiagnosisView';
import { makeOomDiagnosis, oomRecord, UNKNOWN_OOM_FIGURES } from './cellFixtures';
import { EVIL, GiB, makeCpuSample, makeGpu, makeHello, makeSample, MiB, wire } from './fixtures';

const diagnosis = makeOomDiagnosis;

describe('the oom field of a cell record', () => {
  it('parses a diagnosis and reads an absent one as null', () => {
    const parsed = parseCellRecord(oomRecord({ oom: diagnosis() }));
    expect('record' in parsed && parsed.record.oom?.causes[0].cause).toBe('fragmentation');
    const old = { ...oomRecord() } as any;
    delete old.oom;
    const parsedOld = parseCellRecord(old);
    expect('record' in parsedOld && parsedOld.record.oom).toBeNull();
  });

  it('names the bad field of a malformed diagnosis', () => {
    const bad = oomRecord({ oom: { ...diagnosis(), requested_bytes: -1 } as any });
    expect(parseCellRecord(bad)).toEqual({
      error: expect.stringContaining('record.oom.requested_bytes')
    });
    const badCause = oomRecord({ oom: { ...diagnosis(), causes: [{ gain_bytes: 1 }] } as any });
    expect(parseCellRecord(badCause)).toEqual({
      error: expect.stringContaining('record.oom.causes[0].cause')
    });
  });
});

describe('explainOom', () => {
  it('says what a request was too big for: the card, the memory cap, or what other processes leave', () => {
    const card = explainOom(
      diagnosis({ requested_bytes: 100 * GiB, capacity_bytes: 79 * GiB, causes: [{ cause: 'too_big', gain_bytes: null }] }),
      'binary'
    );
    expect(card.causes[0].text).toMatch(/^Too big for the card: 100 GiB is more than the 80 GiB it has/);
    const others = explainOom(
      diagnosis({
        requested_bytes: 10 * GiB,
        other_processes_bytes: 70 * GiB,
        capacity_bytes: 9 * GiB,
        causes: [{ cause: 'too_big', gain_bytes: null }, { cause: 'other_processes', gain_bytes: 70 * GiB }]
      }),
      'binary'
    );
    expect(others.causes[0].text).toBe(
      'Too big for what this kernel can get: 10 GiB is more than the 9 GiB left to it of the card\'s 80 GiB ' +
        'once other processes (70 GiB) and its CUDA context are counted, even if it freed everything. ' +
        'Ending those processes would make room; otherwise the work must shrink: ' +
        'a smaller batch, mixed precision, gradient checkpointing or accumulation.'
    );
    expect(others.causes[0].text).not.toContain('more than the 80 GiB');
    const capped = explainOom(
      diagnosis({
        requested_bytes: 25 * GiB,
        other_processes_bytes: 0,
        capacity_bytes: 20 * GiB,
        allowed_bytes: 20 * GiB,
        causes: [{ cause: 'too_big', gain_bytes: null }]
      }),
      'binary'
    );
    expect(capped.causes[0].text).toMatch(
      /^Too big for this kernel's memory cap: 25 GiB is more than the 20 GiB that torch.cuda.set_per_process_memory_fraction allows it/
    );
  });

  it('words fragmentation by what the cache was to the request', () => {
    const fragmentation = [{ cause: 'fragmentation', gain_bytes: GiB }];
    const library = explainOom(
      diagnosis({ kind: 'cuda_library', library: 'cuBLAS', requested_bytes: null, reserved_unallocated_bytes: GiB, num_alloc_retries: null, causes: fragmentation }),
      'binary'
    );
    expect(library.causes[0].text).toBe(
      "Fragmentation: PyTorch's cache holds 1 GiB reserved but unallocated, which cuBLAS cannot use: " +
        'it allocates outside that cache; torch.cuda.empty_cache() gives it back.'
    );
    const part = explainOom(
      diagnosis({ requested_bytes: 3 * GiB, reserved_unallocated_bytes: GiB, num_alloc_retries: null, causes: fragmentation }),
      'binary'
    );
    expect(part.causes[0].text).toBe(
      "Fragmentation: PyTorch's cache holds 1 GiB reserved but unallocated, part of what the 3 GiB asked for would need."
    );
    expect(part.causes[0].text).not.toContain('more than');
  });

  it('says what ran out, with the numbers', () => {
    const text = explainOom(diagnosis(), 'binary', 7);
    expect(text.headline).toBe(
      'Cell [7] ran out of GPU 0 memory: it asked for 2 GiB with 300 MiB free of 80 GiB.'
    );
    expect(text.causes.map(c => c.cause)).toEqual([
      'fragmentation',
      'stale_references',
      'other_processes'
    ]);
    expect(text.causes[0].text).toContain('6 GiB reserved but unallocated');
    expect(text.causes[0].text).toContain('retried 3 times');
    expect(text.causes[1].text).toContain('activations: 3 GiB, the last traceback: 1 GiB');
    expect(text.causes[2].text).toContain('pid 4242 (2 GiB)');
    expect(text.figures).toContainEqual({ key: 'retries', label: 'Allocation retries', value: '3' });
  });

  it('explains a host MemoryError and a cause-less cuBLAS failure', () => {
    const host = explainOom(
      diagnosis({
        kind: 'host',
        device_index: null,
        requested_bytes: 8 * GiB * 1024,
        total_bytes: 24 * GiB,
        free_bytes: 20 * GiB,
        causes: [{ cause: 'too_big', gain_bytes: null }]
      }),
      'binary'
    );
    expect(host.headline).toBe(
      'The cell ran out of host RAM: it asked for 8 TiB with 20 GiB free of 24 GiB.'
    );
    expect(host.causes[0].text).toMatch(/^Too big for the machine: 8 TiB is more than the 24 GiB/);
    expect(host.figures[1]).toEqual({ key: 'free', label: 'Available', value: '20 GiB' });
    expect(host.figures[2]).toEqual({ key: 'total', label: 'Total RAM', value: '24 GiB' });
    // In a container the helper measured against the limit: the words say so.
    const contained = explainOom(
      diagnosis({
        kind: 'host',
        device_index: null,
        requested_bytes: 8 * GiB,
        total_bytes: 4 * GiB,
        free_bytes: GiB,
        causes: [{ cause: 'too_big', gain_bytes: null }]
      }),
      'binary',
      3,
      true
    );
    expect(contained.figures[2]).toEqual({ key: 'total', label: 'Container limit', value: '4 GiB' });
    expect(contained.causes[0].text).toMatch(/^Too big for the container: 8 GiB is more than the 4 GiB/);
    const cublas = explainOom(
      diagnosis({ kind: 'cuda_library', library: 'cuBLAS', requested_bytes: null, causes: [] }),
      'binary'
    );
    expect(cublas.headline).toBe(
      'The cell ran out of GPU 0 (cuBLAS) memory: cuBLAS could not get memory for its workspace.'
    );
    expect(cublas.causes[0].cause).toBe('unknown');
  });
});

describe('explainOom: figures the kernel could not read', () => {
  // Every figure unknown; the holders and processes listed but not sized.
  const unknown: Partial<OomDiagnosis> = {
    ...UNKNOWN_OOM_FIGURES,
    allowed_bytes: null,
    num_alloc_retries: null,
    other_processes: [
      { pid: 4242, used_bytes: null },
      { pid: 4343, used_bytes: 0 }
    ],
    stale_holders: [
      { holder: 'name', label: 'x', bytes: 0 },
      { holder: 'last_traceback', label: 'Traceback of the last error', bytes: 0 }
    ],
    in_use_holders: [{ holder: 'name', label: 'model', bytes: 0 }]
  };
  const CAUSES = ['too_big', 'fragmentation', 'stale_references', 'other_processes'];
  const reads = (text: string) => {
    expect(text).not.toContain(UNKNOWN_TEXT);
    expect(text).not.toMatch(/ 0 B\b/);
    expect(text).not.toMatch(/\s\(\s*\)/); // an emptied parenthesis
    expect(text).toMatch(/\.$/);
  };
  const kinds: Partial<OomDiagnosis>[] = [
    { kind: 'cuda' },
    { kind: 'cuda_library', library: 'cuBLAS' },
    { kind: 'tensorflow', framework: 'tensorflow' },
    { kind: 'host', device_index: null },
    { kind: 'mps', device_index: null },
    { kind: 'xla', device_index: null }
  ];

  it.each(CAUSES)('%s reads as a sentence on every device, in both units, in and out of a container', cause => {
    for (const kind of kinds) {
      for (const units of ['binary', 'decimal'] as const) {
        for (const container of [false, true]) {
          const d = diagnosis({ ...unknown, ...kind, causes: [{ cause, gain_bytes: null }] });
          const text = explainOom(d, units, null, container);
          reads(text.headline);
          expect(text.causes.map(c => c.cause)).toEqual([cause]);
          reads(text.causes[0].text);
        }
      }
    }
  });

  it('says each cause without the figures it lacks', () => {
    const text = (overrides: Partial<OomDiagnosis>) =>
      explainOom(diagnosis({ ...unknown, ...overrides }), 'binary').causes[0].text;
    const only = (cause: string) => [{ cause, gain_bytes: null }];
    expect(text({ causes: only('stale_references') })).toBe(
      'Stale references: this notebook still holds memory on this device (x, the last traceback) ' +
        'that the failing cell does not use; not counted: model, which it does.'
    );
    expect(text({ causes: only('other_processes') })).toBe('Other processes hold memory on this card: pid 4242, pid 4343.');
    expect(text({ kind: 'host', device_index: null, causes: only('other_processes') })).toBe(
      'Memory used by the rest of the machine: its RAM is partly taken by everything but this kernel ' +
        '(other programs, the system and its caches).'
    );
    expect(text({ causes: only('fragmentation') })).toBe(
      "Fragmentation: PyTorch's cache holds memory reserved but unallocated; torch.cuda.empty_cache() gives it back."
    );
    // The request known, the cache not: neither more nor less than it can be said.
    expect(text({ requested_bytes: 2 * GiB, num_alloc_retries: 3, causes: only('fragmentation') })).toBe(
      "Fragmentation: PyTorch's cache holds memory reserved but unallocated, in pieces too small for the 2 GiB " +
        'asked for (the allocator already retried 3 times).'
    );
    // The cache figure missing, the cause's gain is said (as the actions say it).
    expect(text({ requested_bytes: null, causes: [{ cause: 'fragmentation', gain_bytes: GiB }] })).toBe(
      "Fragmentation: PyTorch's cache holds 1 GiB reserved but unallocated; torch.cuda.empty_cache() gives it back."
    );
    expect(text({ causes: only('too_big') })).toBe(
      'Too big for what this kernel can get: the request is more than what is left to it of the card once ' +
        'its CUDA context is counted, even if it freed everything. The work itself must shrink: ' +
        'a smaller batch, mixed precision, gradient checkpointing or accumulation.'
    );
    expect(text({ requested_bytes: 10 * GiB, capacity_bytes: 9 * GiB, causes: only('too_big') })).toMatch(
      /^Too big for what this kernel can get: 10 GiB is more than the 9 GiB left to it of the card once/
    );
    expect(text({ capacity_bytes: 20 * GiB, allowed_bytes: 20 * GiB, causes: only('too_big') })).toMatch(
      /^Too big for this kernel's memory cap: the request is more than the 20 GiB that torch/
    );
    // Only the cell's own objects, unsized.
    expect(text({ causes: [] })).toMatch(/^The failing cell's own objects hold the memory \(model\), and nothing/);
  });

  it('still names each figure it has', () => {
    const text = explainOom(diagnosis(), 'binary').causes.map(c => c.text);
    expect(text[1]).toBe(
      'Stale references: this notebook still holds 4 GiB on this device (activations: 3 GiB, the last traceback: 1 GiB).'
    );
    expect(text[2]).toBe('Other processes hold 2 GiB on this card: pid 4242 (2 GiB).');
  });
});

describe('oomActions', () => {
  it('ranks the fixes by the causes, each with its expected gain', () => {
    const actions = oomActions(diagnosis(), 'binary');
    expect(actions.map(a => a.id).slice(0, 5)).toEqual([
      'free-memory',
      'expandable-segments',
      'clear-traceback',
      'delete-holders',
      'show-processes'
    ]);
    expect(actions[0].gain).toContain('up to 6 GiB');
    // Who holds the rest of the card: the Kernels tab.
    expect(actions[4].steps).toEqual([{ command: CommandIDs.openSidebar, args: { tab: 'kernels' } }]);
    expect(actions[4].gain).toContain('They hold 2 GiB');
    const othersFirst = oomActions(
      diagnosis({ causes: [{ cause: 'other_processes', gain_bytes: 2 * GiB }] }),
      'binary'
    );
    expect(othersFirst.map(a => a.id).slice(0, 2)).toEqual(['show-processes', 'free-memory']);
    expect(actions[1].steps).toEqual([
      { command: CommandIDs.insertSnippet, args: { id: 'allocator-config' } },
      { command: RESTART_KERNEL_COMMAND }
    ]);
    const remove = actions.find(a => a.id === 'delete-holders')!;
    expect(remove.steps[0]).toEqual({
      command: CommandIDs.deleteVariables,
      args: { names: ['activations'], hidden: ['last_traceback'], fresh: true }
    });
    expect(remove.gain).toContain('up to 4 GiB');
    for (const action of actions) {
      expect(action.gain.length).toBeGreaterThan(10);
    }
    expect(new Set(actions.map(a => a.id)).size).toBe(actions.length);
  });

  it('promises no more than the diagnosis counted once, however many holders share it', () => {
    // x and the output cache hold the same 4 GiB tensor.
    const shared = oomActions(
      diagnosis({
        stale_bytes: 4 * GiB,
        stale_holders: [
          { holder: 'name', label: 'x', bytes: 4 * GiB },
          { holder: 'output_cache', label: 'Out[3]', bytes: 4 * GiB }
        ]
      }),
      'binary'
    );
    expect(shared.find(a => a.id === 'delete-holders')!.gain).toMatch(/^Frees up to 4 GiB;/);
  });

  it('leaves out what was done since the failure: deleted names, cleared holders, recording turned on', () => {
    const d = diagnosis({
      stale_holders: [
        { holder: 'name', label: 'activations', bytes: 3 * GiB },
        { holder: 'name', label: 'cache', bytes: 1 * GiB },
        { holder: 'last_traceback', label: 'Traceback of the last error', bytes: 1 * GiB }
      ],
      allocation_sites: { recording: false, sites: [] }
    });
    const before = oomActions(d, 'binary');
    // 5 GiB of holders, 4 GiB counted once (stale_bytes): a holder's bytes may be shared.
    expect(before.find(a => a.id === 'delete-holders')!.gain).toContain('up to 4 GiB');
    expect(before.map(a => a.id)).toContain('record-allocations');
    const after = oomActions(d, 'binary', {
      deletedNames: new Set(['activations']),
      clearedHidden: new Set(['last_traceback']),
      recording: true
    });
    const remove = after.find(a => a.id === 'delete-holders')!;
    expect(remove.label).toBe('Delete the largest holders (cache)');
    expect(remove.gain).toContain('up to 1 GiB');
    expect(remove.steps[0].args).toEqual({ names: ['cache'], hidden: [], fresh: true });
    expect(after.map(a => a.id)).not.toContain('clear-traceback');
    expect(after.map(a => a.id)).not.toContain('record-allocations');
    const allGone = oomActions(d, 'binary', {
      deletedNames: new Set(['activations', 'cache']),
      clearedHidden: new Set(['last_traceback']),
      recording: false
    });
    expect(allGone.map(a => a.id)).not.toContain('delete-holders');
    expect(allGone[0].id).toBe('free-memory'); // always offered
  });

  it('puts shrinking the work first when the request is too big, and offers no CUDA fixes for host RAM', () => {
    const tooBig = oomActions(
      diagnosis({ causes: [{ cause: 'too_big', gain_bytes: null }], stale_holders: [] }),
      'binary'
    );
    // Freeing still helps the next cells; the gains say it cannot make this request fit.
    const tooBigHost = oomActions(
      diagnosis({
        kind: 'host',
        requested_bytes: 8 * GiB * 1024,
        total_bytes: 24 * GiB,
        causes: [{ cause: 'too_big', gain_bytes: null }]
      }),
      'binary'
    );
    for (const id of ['free-memory', 'delete-holders']) {
      expect(tooBigHost.find(a => a.id === id)!.gain).toContain(
        'Not enough for this request: it is larger than the whole machine.'
      );
    }
    expect(oomActions(diagnosis(), 'binary').find(a => a.id === 'free-memory')!.gain).not.toContain('Not enough');
    // Too big for what other processes leave: not "larger than the whole card".
    expect(tooBig.find(a => a.id === 'free-memory')!.gain).toContain(
      'Not enough for this request: it needs more than this kernel can get.'
    );
    expect(tooBig.map(a => a.id).slice(0, 4)).toEqual([
      'insert-amp',
      'insert-batch-size-search',
      'insert-grad-checkpointing',
      'insert-grad-accumulation'
    ]);
    // PyTorch's CPU allocator: a batch to shrink.
    const host = oomActions(
      diagnosis({ kind: 'host', framework: 'torch', causes: [{ cause: 'stale_references', gain_bytes: 1 }] }),
      'binary'
    );
    expect(host.map(a => a.id)).toEqual([
      'clear-traceback',
      'delete-holders',
      'free-memory',
      'insert-batch-size-search'
    ]);
    // A NumPy array: no training step, no batch-size search.
    const numpy = oomActions(
      diagnosis({ kind: 'host', framework: 'numpy', causes: [{ cause: 'stale_references', gain_bytes: 1 }] }),
      'binary'
    );
    expect(numpy.map(a => a.id)).toEqual(['clear-traceback', 'delete-holders', 'free-memory']);
  });
});

describe('OomDiagnosisView', () => {
  function setup() {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    const run = jest.fn();
    const view = new OomDiagnosisView({ settings: { ...DEFAULT_SETTINGS }, run });
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
            oom: diagnosis({ stale_holders: [{ holder: 'name', label, bytes: GiB }] })
          })
        ]
      })
    );
    MessageLoop.flush();
    expect(view.node.hidden).toBe(false);
    const q = (role: string) =>
      Array.from(view.node.querySelectorAll<HTMLElement>(`[data-vram-role="${role}"]`));
    expect(q('oom-headline')[0].textContent).toContain('Cell [4] ran out of GPU 0 memory');
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
    expect(run).toHaveBeenCalledWith(expect.objectContaining({ id: 'free-memory' }));
    view.dispose();
  });

  it("follows this page's deletes: a deleted holder is no longer offered", () => {
    const { model, view } = setup();
    model.setState('live');
    const holders = [
      { holder: 'name', label: 'activations', bytes: 3 * GiB },
      { holder: 'name', label: 'cache', bytes: 1 * GiB }
    ];
    model.ingest(wire({ type: 'cells', records: [oomRecord({ record_id: 1, execution_count: 4, oom: diagnosis({ stale_holders: holders }) })] }));
    MessageLoop.flush();
    const deleteButton = () =>
      view.node.querySelector<HTMLElement>('[data-vram-role="oom-action"][data-vram-action="delete-holders"]');
    expect(deleteButton()!.textContent).toBe('Delete the largest holders (activations, cache)');
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
    // A free outcome, or a failed delete, changes nothing.
    actions.lastOutcome = { kind: 'free', status: 'done', result: null };
    changed.emit('outcome');
    actions.lastOutcome = { kind: 'delete', status: 'failed', result: null };
    changed.emit('outcome');
    MessageLoop.flush();
    expect(deleteButton()!.textContent).toBe('Delete the largest holders (activations, cache)');
    deleted(['activations']);
    expect(deleteButton()!.textContent).toBe('Delete the largest holders (cache)');
    // The same reply said again (MemoryActions.redescribe, new units), or met again when the
    // actions are attached anew (a notebook switch), is not a new delete.
    const earlier = { deleted: ['cache'], refused: [], cleared: [], still_alive: [] };
    actions.lastOutcome = { kind: 'delete', status: 'done', result: earlier };
    view.actions = null;
    view.actions = actions;
    changed.emit('outcome');
    actions.lastOutcome = { ...actions.lastOutcome };
    changed.emit('outcome');
    MessageLoop.flush();
    expect(deleteButton()!.textContent).toBe('Delete the largest holders (cache)');
    deleted(['cache']);
    expect(deleteButton()).toBeNull();
    view.dispose();
    expect(view.actions).toBeNull(); // disconnected: another notebook's deletes are not its own
  });

  it("hides a diagnosis once its kernel process is gone (restart, death, another process)", () => {
    const { model, view } = setup();
    model.ingest(wire({ type: 'cells', records: [oomRecord({ record_id: 3, oom: diagnosis() })] }));
    MessageLoop.flush();
    expect(view.node.hidden).toBe(false);
    model.setState('kernel-starting', 'Restarting\u2026');
    MessageLoop.flush();
    expect(view.node.hidden).toBe(true); // the process that failed is gone
    model.ingest(wire(makeHello({ pid: 9999, record_series: 'series-2' })));
    MessageLoop.flush();
    expect(view.node.hidden).toBe(true); // live again, but another process: nothing to diagnose
    expect(model.cells.entries).toHaveLength(1); // the record itself stays in the history
    model.ingest(wire({ type: 'cells', records: [oomRecord({ record_id: 1, oom: diagnosis() })] }));
    MessageLoop.flush();
    expect(view.node.hidden).toBe(false);
    view.dispose();
  });

  it('hides a dismissed diagnosis until a newer cell dies of OOM', () => {
    const { model, view } = setup();
    model.ingest(wire({ type: 'cells', records: [oomRecord({ record_id: 1, oom: diagnosis() })] }));
    MessageLoop.flush();
    view.node.querySelector<HTMLElement>('[data-vram-role="oom-dismiss"]')!.click();
    MessageLoop.flush();
    expect(view.node.hidden).toBe(true);
    model.ingest(wire({ type: 'cells', records: [oomRecord({ record_id: 2, oom: diagnosis() })] }));
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
      m.ingest(wire({ type: 'cells', records: [oomRecord({ record_id: 1, oom: diagnosis() })] }));
    }
    MessageLoop.flush();
    const key = view.node.dataset.vramRecord;
    view.node.querySelector<HTMLElement>('[data-vram-role="oom-dismiss"]')!.click();
    MessageLoop.flush();
    expect(view.node.hidden).toBe(true);
    view.model = other; // its record has the same key, in its own model
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

describe('the diagnosis figures now, beside those at the failure', () => {
  /** GPU 0 after a fix: 1 GiB in tensors of 2 GiB reserved, NVML 40 of 80 GiB used (3 GiB by the kernel, 2 GiB by pid 4242). */
  function sampleAfterFix() {
    return makeSample({
      gpus: [
        makeGpu({
          index: 0,
          torch: { ...makeGpu().torch!, allocated_bytes: GiB, reserved_bytes: 2 * GiB },
          nvml: {
            used_bytes: 40 * GiB,
            total_bytes: 80 * GiB,
            process_used_bytes: 3 * GiB,
            processes: [
              { pid: 1, used_bytes: 3 * GiB, this_process: true },
              { pid: 4242, used_bytes: 2 * GiB, this_process: false }
            ]
          }
        })
      ]
    });
  }

  it('reads from the latest sample the figures it also has, for the failed device', () => {
    expect(oomFiguresNow(diagnosis(), sampleAfterFix())).toEqual({
      free: 40 * GiB,
      process: 3 * GiB,
      allocated: GiB,
      reservedUnallocated: GiB,
      otherProcesses: 2 * GiB
    });
    // Another device failed, no sample yet: nothing to say.
    expect(oomFiguresNow(diagnosis({ device_index: 1 }), sampleAfterFix())).toEqual({});
    expect(oomFiguresNow(diagnosis(), null)).toEqual({});
    // A process NVML gives no size for: no total of the others.
    const unknownOther = sampleAfterFix();
    unknownOther.gpus[0].nvml!.processes![1].used_bytes = null;
    expect(oomFiguresNow(diagnosis(), unknownOther).otherProcesses).toBeUndefined();
    // In a container NVML lists this kernel by a host pid it cannot tell as its own
    // (process_used_bytes null): the others' total would count this kernel too.
    const container = sampleAfterFix();
    container.gpus[0].nvml!.process_used_bytes = null;
    for (const p of container.gpus[0].nvml!.processes!) {
      p.this_process = false;
    }
    expect(oomFiguresNow(diagnosis(), container).otherProcesses).toBeUndefined();
  });

  it('host RAM: what is available and the kernel RSS', () => {
    const host = diagnosis({ kind: 'host', device_index: null });
    const sample = makeCpuSample({
      host: { rss_bytes: 600 * MiB, total_bytes: 64 * GiB, available_bytes: 50 * GiB, container: null }
    });
    expect(oomFiguresNow(host, sample)).toEqual({ free: 50 * GiB, process: 600 * MiB });
  });

  it('the view shows each one after the figure at the failure, and follows the samples', () => {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    model.ingest(wire(makeHello()));
    const view = new OomDiagnosisView({ settings: { ...DEFAULT_SETTINGS }, run: jest.fn() });
    view.model = model;
    Widget.attach(view, document.body);
    model.ingest(wire({ type: 'cells', records: [oomRecord({ record_id: 1, oom: diagnosis() })] }));
    MessageLoop.flush();
    const now = (figure: string) =>
      view.node.querySelector<HTMLElement>(`[data-vram-role="oom-figure-now"][data-vram-figure="${figure}"]`)!;
    // No sample since the failure was read here: nothing beside the figures.
    expect(now('allocated').textContent).toBe('');
    model.ingest(wire(sampleAfterFix()));
    MessageLoop.flush();
    const allocated = now('allocated');
    expect(allocated.parentElement!.textContent).toBe('70 GiBnow 1 GiB'); // two lines (CSS)
    expect(allocated.dataset.vramBytes).toBe(String(GiB));
    expect(now('requested').textContent).toBe(''); // no sample reads what was asked for
    model.ingest(wire({ ...sampleAfterFix(), time: 1732200001, gpus: [] }));
    MessageLoop.flush();
    expect(now('allocated')).toBe(allocated); // updated in place, not rebuilt
    expect(allocated.textContent).toBe('');
    view.dispose();
  });
});
