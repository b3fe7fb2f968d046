/**
 * Tests that the remedies fit what ran out and whose allocation it was. A
 * TensorFlow failure gets TensorFlow's snippets, a torch before 2.1 is not
 * offered expandable_segments, a host RAM failure speaks of the rest of the
 * machine (not of "processes on this card"), and the failing cell's own model
 * is never offered as a stale reference.
 */
import { CommandIDs } from '../../ui/commandIds';
import { parseCellRecord } from '../../protocol/cell';
import { oomActions, RESTART_KERNEL_COMMAND } from './oomActions';
import { explainOom } from './oomExplanation';
import { UNKNOWN_TEXT } from '../../text/format';
import { OomDiagnosis } from '../../protocol/oom';
import { DEFAULT_SNIPPETS } from '../snippets/defaultSnippets';
import {
  makeOomDiagnosis,
  oomRecord,
  UNKNOWN_OOM_FIGURES
} from '../../testing/cellFixtures';
import { GiB, MiB } from '../../testing/fixtures';

/**
 * Returns a diagnosis on a 16 GiB card whose free memory sits in reserved
 * holes, so that fragmentation is its only cause.
 */
function diagnosis(overrides: Partial<OomDiagnosis> = {}): OomDiagnosis {
  return makeOomDiagnosis({
    total_bytes: 16 * GiB,
    free_bytes: 200 * MiB,
    allocated_bytes: 14 * GiB,
    reserved_unallocated_bytes: 3 * GiB,
    process_in_use_bytes: 15 * GiB,
    other_processes_bytes: 0,
    other_processes: [],
    capacity_bytes: 15.5 * GiB,
    num_alloc_retries: null,
    stale_bytes: 0,
    stale_holders: [],
    causes: [{ cause: 'fragmentation', gain_bytes: 3 * GiB }],
    ...overrides
  });
}

const ids = (d: OomDiagnosis) => oomActions(d, 'binary').map(a => a.id);
const TORCH_SNIPPETS = [
  'insert-amp',
  'insert-batch-size-search',
  'insert-grad-checkpointing',
  'insert-grad-accumulation',
  'insert-no-grad-eval',
  'expandable-segments'
];
const snippetIds = (d: OomDiagnosis) =>
  oomActions(d, 'binary')
    .flatMap(a => a.steps)
    .filter(s => s.command === CommandIDs.insertSnippet)
    .map(s => (s.args as { id: string }).id);

describe('a TensorFlow out-of-memory error', () => {
  const tf = diagnosis({
    kind: 'tensorflow',
    framework: 'tensorflow',
    requested_bytes: 4 * GiB,
    reserved_unallocated_bytes: null,
    causes: [],
    stale_bytes: GiB,
    stale_holders: [{ holder: 'name', label: 'old_model', bytes: GiB }]
  });

  it("gets TensorFlow's snippets, and none of PyTorch's", () => {
    const offered = ids(tf);
    expect(offered).toContain('insert-tf-clear-session');
    expect(offered).toContain('tf-memory-growth');
    for (const id of TORCH_SNIPPETS) {
      expect(offered).not.toContain(id);
    }
    const growth = oomActions(tf, 'binary').find(
      a => a.id === 'tf-memory-growth'
    )!;
    expect(growth.steps).toEqual([
      { command: CommandIDs.insertSnippet, args: { id: 'tf-memory-growth' } },
      { command: RESTART_KERNEL_COMMAND }
    ]);
    expect(
      oomActions(tf, 'binary').find(a => a.id === 'free-memory')!.gain
    ).not.toContain('torch');
  });

  it('offers only snippets the library has', () => {
    const known = new Set(DEFAULT_SNIPPETS.map(s => s.id));
    for (const d of [
      tf,
      diagnosis(),
      diagnosis({ kind: 'host', framework: 'torch' })
    ]) {
      for (const id of snippetIds(d)) {
        expect(known.has(id)).toBe(true);
      }
    }
  });

  it('with another kernel holding the card: who, then memory growth', () => {
    const shared = {
      ...tf,
      other_processes_bytes: 10 * GiB,
      causes: [{ cause: 'other_processes', gain_bytes: 10 * GiB }]
    };
    expect(ids(shared).slice(0, 2)).toEqual([
      'show-processes',
      'tf-memory-growth'
    ]);
  });
});

describe('expandable_segments', () => {
  it('is not offered to a torch that predates it (< 2.1)', () => {
    expect(ids(diagnosis({ expandable_segments: false }))).not.toContain(
      'expandable-segments'
    );
    expect(
      ids(diagnosis({ expandable_segments: false, causes: [] }))
    ).not.toContain('expandable-segments');
  });

  it('is offered to torch >= 2.1, and where the version is not known', () => {
    expect(ids(diagnosis({ expandable_segments: true })).slice(0, 2)).toEqual([
      'free-memory',
      'expandable-segments'
    ]);
    expect(ids(diagnosis({ expandable_segments: null }))).toContain(
      'expandable-segments'
    );
    // A helper too old to send the field leaves the version unknown, and the
    // fix is offered.
    expect(ids(diagnosis())).toContain('expandable-segments');
  });

  it('is not offered where the allocator has them on already: the restart would lose the kernel for nothing', () => {
    const on = diagnosis({
      expandable_segments: true,
      expandable_segments_on: true
    });
    expect(ids(on)).not.toContain('expandable-segments');
    // The fragmentation cause still offers the fix that frees the cache.
    expect(ids(on)[0]).toBe('free-memory');
    expect(
      ids(
        diagnosis({ expandable_segments: true, expandable_segments_on: false })
      )
    ).toContain('expandable-segments');
    expect(
      ids(
        diagnosis({ expandable_segments: true, expandable_segments_on: null })
      )
    ).toContain('expandable-segments');
  });
});

describe('host RAM', () => {
  const host = diagnosis({
    kind: 'host',
    framework: 'numpy',
    device_index: null,
    requested_bytes: 8 * GiB,
    total_bytes: 16 * GiB,
    free_bytes: 2 * GiB,
    allocated_bytes: null,
    reserved_unallocated_bytes: null,
    process_in_use_bytes: GiB,
    other_processes_bytes: 13 * GiB,
    capacity_bytes: 16 * GiB,
    causes: [{ cause: 'other_processes', gain_bytes: 13 * GiB }]
  });

  it('says what the rest of the machine uses, not processes on a card', () => {
    const text = explainOom(host, 'binary');
    expect(text.causes[0].text).toMatch(
      /^Memory used by the rest of the machine: 13 GiB/
    );
    expect(text.causes[0].text).not.toMatch(/card|Other processes hold/);
    expect(text.figures).toContainEqual({
      key: 'otherProcesses',
      label: 'Used by the rest of the machine',
      value: '13 GiB'
    });
    expect(explainOom(host, 'binary', null, true).causes[0].text).toContain(
      'the rest of the container'
    );
    expect(ids(host)).not.toContain('show-processes');
    // A NumPy array has no batch to shrink.
    expect(ids(host)).not.toContain('insert-batch-size-search');
  });

  it("suggests training remedies only for PyTorch's allocation", () => {
    const tooBig = {
      ...host,
      requested_bytes: 64 * GiB,
      causes: [{ cause: 'too_big', gain_bytes: null }]
    };
    const numpy = explainOom(tooBig, 'binary').causes[0].text;
    expect(numpy).not.toMatch(/mixed precision|checkpointing/);
    expect(numpy).toContain('chunks');
    const torch = explainOom({ ...tooBig, framework: 'torch' }, 'binary')
      .causes[0].text;
    expect(torch).toContain('mixed precision');
    expect(ids({ ...tooBig, framework: 'torch' }).slice(0, 2)).toEqual([
      'estimate-memory',
      'insert-batch-size-search'
    ]);
  });
});

describe("the failing cell's own objects", () => {
  const training = diagnosis({
    requested_bytes: GiB,
    reserved_unallocated_bytes: 300 * MiB,
    causes: [],
    in_use_holders: [
      { holder: 'name', label: 'optimizer', bytes: 4 * GiB },
      { holder: 'name', label: 'model', bytes: 2 * GiB }
    ]
  });

  it('are not offered for deletion: the work shrinks first', () => {
    const text = explainOom(training, 'binary');
    expect(text.causes[0].cause).toBe('in_use');
    expect(text.causes[0].text).toContain('optimizer: 4 GiB, model: 2 GiB');
    expect(text.causes[0].text).toContain('The work itself must shrink');
    const actions = oomActions(training, 'binary');
    expect(actions.map(a => a.id).slice(0, 5)).toEqual([
      'estimate-memory',
      'insert-amp',
      'insert-batch-size-search',
      'insert-grad-checkpointing',
      'insert-grad-accumulation'
    ]);
    expect(actions.map(a => a.id)).not.toContain('delete-holders');
  });

  it('are named as left out of the stale references', () => {
    const stale = explainOom(
      {
        ...training,
        stale_bytes: 3 * GiB,
        stale_holders: [
          { holder: 'name', label: 'old_logits', bytes: 3 * GiB }
        ],
        causes: [{ cause: 'stale_references', gain_bytes: 3 * GiB }]
      },
      'binary'
    );
    expect(stale.causes[0].text).toBe(
      'Stale references: this notebook still holds 3 GiB on this device (old_logits: 3 GiB) ' +
        'that the failing cell does not use; not counted: optimizer, model, which it does.'
    );
  });
});

describe('the new fields on the wire', () => {
  it('are read, and default for older helpers', () => {
    const parsed = parseCellRecord(
      oomRecord({
        oom: {
          ...diagnosis(),
          framework: 'torch',
          expandable_segments: false,
          expandable_segments_on: true,
          in_use_holders: [{ holder: 'name', label: 'model', bytes: GiB }]
        }
      })
    );
    expect('record' in parsed && parsed.record.oom).toMatchObject({
      framework: 'torch',
      expandable_segments: false,
      expandable_segments_on: true,
      in_use_holders: [{ holder: 'name', label: 'model', bytes: GiB }]
    });
    const old = parseCellRecord(oomRecord({ oom: diagnosis() }));
    expect('record' in old && old.record.oom).toMatchObject({
      framework: null,
      expandable_segments: null,
      expandable_segments_on: null,
      in_use_holders: []
    });
    const bad = parseCellRecord(
      oomRecord({ oom: { ...diagnosis(), expandable_segments: 3 } as any })
    );
    expect(bad).toEqual({
      error: expect.stringContaining('record.oom.expandable_segments')
    });
    const badOn = parseCellRecord(
      oomRecord({
        oom: { ...diagnosis(), expandable_segments_on: 'yes' } as any
      })
    );
    expect(badOn).toEqual({
      error: expect.stringContaining('record.oom.expandable_segments_on')
    });
  });
});

describe('devices the kernel cannot read: Apple MPS, JAX/XLA', () => {
  for (const [kind, framework, place] of [
    ['mps', 'torch', 'the Apple GPU (MPS)'],
    ['xla', 'jax', 'the accelerator (JAX/XLA)']
  ]) {
    it(`${kind}: says so, and offers no CUDA snippets`, () => {
      const d = diagnosis({
        kind,
        framework,
        device_index: null,
        requested_bytes: 256 * MiB,
        total_bytes: null,
        free_bytes: null,
        reserved_unallocated_bytes: null,
        causes: []
      });
      const text = explainOom(d, 'binary');
      expect(text.headline).toBe(
        `The cell ran out of ${place} memory: it asked for 256 MiB.`
      );
      expect(text.causes[0].text).toContain(
        `cannot read the memory of ${place}`
      );
      for (const id of TORCH_SNIPPETS) {
        expect(ids(d)).not.toContain(id);
      }
      expect(ids(d)).toContain('free-memory');
    });
  }
});

describe('figures the kernel could not read', () => {
  // This is a MemoryError with PyTorch's words in a kernel that never imported
  // PyTorch: the message names the request, and nothing else is known.
  const bare = diagnosis({
    framework: 'torch',
    ...UNKNOWN_OOM_FIGURES,
    requested_bytes: 20 * GiB,
    causes: [],
    allocation_sites: { recording: false, sites: [] }
  });
  const reads = (gain: string) => {
    expect(gain).not.toContain(UNKNOWN_TEXT);
    expect(gain).not.toMatch(/\b0 B\b/);
    expect(gain).toMatch(/\.$/);
  };

  it('leave no hole in the expandable_segments text', () => {
    const expandable = oomActions(bare, 'binary').find(
      a => a.id === 'expandable-segments'
    )!;
    expect(expandable.gain).toBe(
      'Inserts a first cell setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, then restarts the kernel: ' +
        "PyTorch's cache then loses far less memory to fragmentation. Run that cell first."
    );
    // When the fragmentation figure is known, the gain names it.
    expect(
      oomActions(diagnosis(), 'binary').find(
        a => a.id === 'expandable-segments'
      )!.gain
    ).toContain('stops most of the 3 GiB of fragmentation.');
    for (const action of oomActions(bare, 'binary')) {
      reads(action.gain);
    }
  });

  it('leave no hole in any action that names a figure', () => {
    // Every cause is present at once, and each of its figures is unknown. A
    // holder the kernel could not size shows 0 bytes.
    const unknown = diagnosis({
      reserved_unallocated_bytes: null,
      other_processes_bytes: null,
      stale_bytes: null,
      stale_holders: [
        { holder: 'name', label: 'x', bytes: 0 },
        {
          holder: 'last_traceback',
          label: 'Traceback of the last error',
          bytes: 0
        }
      ],
      causes: [
        { cause: 'stale_references', gain_bytes: null },
        { cause: 'other_processes', gain_bytes: null },
        { cause: 'too_big', gain_bytes: null }
      ],
      allocation_sites: { recording: false, sites: [] }
    });
    const actions = oomActions(unknown, 'binary');
    expect(actions.map(a => a.id)).toEqual(
      expect.arrayContaining([
        'clear-traceback',
        'delete-holders',
        'show-processes',
        'free-memory',
        'expandable-segments'
      ])
    );
    for (const action of actions) {
      reads(action.gain);
    }
    const gain = (id: string) => actions.find(a => a.id === id)!.gain;
    expect(gain('show-processes')).toBe(
      "The Kernels tab lists them; this server's kernels can be shut down there."
    );
    expect(gain('delete-holders')).toMatch(
      /^Frees what they hold; asks before deleting anything\./
    );
    expect(gain('clear-traceback')).toBe(
      'Frees what its frames still hold (disables %debug for that error).'
    );
  });

  it("take the fragmentation cause's gain where the cache figure is missing", () => {
    const d = diagnosis({
      reserved_unallocated_bytes: null,
      causes: [{ cause: 'fragmentation', gain_bytes: 2 * GiB }]
    });
    expect(
      oomActions(d, 'binary').find(a => a.id === 'expandable-segments')!.gain
    ).toContain('stops most of the 2 GiB of fragmentation.');
    expect(
      oomActions(d, 'binary').find(a => a.id === 'free-memory')!.gain
    ).toContain('gives back up to 2 GiB');
  });

  it('rank expandable_segments by the fragmentation cause only: without it, after what shrinks the work', () => {
    const offered = ids(bare);
    expect(offered.slice(0, 3)).toEqual([
      'free-memory',
      'estimate-memory',
      'insert-amp'
    ]);
    expect(offered.indexOf('expandable-segments')).toBeGreaterThan(
      offered.indexOf('insert-batch-size-search')
    );
    expect(offered.filter(id => id !== 'record-allocations').pop()).toBe(
      'expandable-segments'
    );
  });
});
