/**
 * Tests for oomActions, which lists the fixes offered for an out-of-memory
 * failure, ranked by its causes.
 */
import { CommandIDs } from '../../ui/commandIds';
import { oomActions, RESTART_KERNEL_COMMAND } from './oomActions';
import { makeOomDiagnosis } from '../../testing/cellFixtures';
import { GiB } from '../../testing/fixtures';

const diagnosis = makeOomDiagnosis;

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
    // The Kernels tab shows which other processes hold the rest of the card.
    expect(actions[4].steps).toEqual([
      { command: CommandIDs.openSidebar, args: { tab: 'kernels' } }
    ]);
    expect(actions[4].gain).toContain('They hold 2 GiB');
    const othersFirst = oomActions(
      diagnosis({
        causes: [{ cause: 'other_processes', gain_bytes: 2 * GiB }]
      }),
      'binary'
    );
    expect(othersFirst.map(a => a.id).slice(0, 2)).toEqual([
      'show-processes',
      'free-memory'
    ]);
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
    expect(shared.find(a => a.id === 'delete-holders')!.gain).toMatch(
      /^Frees up to 4 GiB;/
    );
  });

  it('leaves out what was done since the failure: deleted names, cleared holders, recording turned on', () => {
    const d = diagnosis({
      stale_holders: [
        { holder: 'name', label: 'activations', bytes: 3 * GiB },
        { holder: 'name', label: 'cache', bytes: 1 * GiB },
        {
          holder: 'last_traceback',
          label: 'Traceback of the last error',
          bytes: 1 * GiB
        }
      ],
      allocation_sites: { recording: false, sites: [] }
    });
    const before = oomActions(d, 'binary');
    // The holders add up to 5 GiB, but holders may share bytes, so the gain
    // uses stale_bytes (4 GiB), which counts each byte once.
    expect(before.find(a => a.id === 'delete-holders')!.gain).toContain(
      'up to 4 GiB'
    );
    expect(before.map(a => a.id)).toContain('record-allocations');
    const after = oomActions(d, 'binary', {
      deletedNames: new Set(['activations']),
      clearedHidden: new Set(['last_traceback']),
      recording: true
    });
    const remove = after.find(a => a.id === 'delete-holders')!;
    expect(remove.label).toBe('Delete the largest holders (cache)');
    expect(remove.gain).toContain('up to 1 GiB');
    expect(remove.steps[0].args).toEqual({
      names: ['cache'],
      hidden: [],
      fresh: true
    });
    expect(after.map(a => a.id)).not.toContain('clear-traceback');
    expect(after.map(a => a.id)).not.toContain('record-allocations');
    const allGone = oomActions(d, 'binary', {
      deletedNames: new Set(['activations', 'cache']),
      clearedHidden: new Set(['last_traceback']),
      recording: false
    });
    expect(allGone.map(a => a.id)).not.toContain('delete-holders');
    expect(allGone[0].id).toBe('free-memory'); // Freeing memory is always offered.
  });

  it('puts shrinking the work first when the request is too big, and offers no CUDA fixes for host RAM', () => {
    const tooBig = oomActions(
      diagnosis({
        causes: [{ cause: 'too_big', gain_bytes: null }],
        stale_holders: []
      }),
      'binary'
    );
    // Freeing memory still helps the cells that follow, so those fixes stay
    // offered, but their gains say that they cannot make this request fit.
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
    expect(
      oomActions(diagnosis(), 'binary').find(a => a.id === 'free-memory')!.gain
    ).not.toContain('Not enough');
    // The request is too big for what this kernel can get, not for the whole
    // card, so the gain must not say "larger than the whole card".
    expect(tooBig.find(a => a.id === 'free-memory')!.gain).toContain(
      'Not enough for this request: it needs more than this kernel can get.'
    );
    expect(tooBig.map(a => a.id).slice(0, 5)).toEqual([
      'estimate-memory',
      'insert-amp',
      'insert-batch-size-search',
      'insert-grad-checkpointing',
      'insert-grad-accumulation'
    ]);
    // A PyTorch failure in host RAM still has a batch to shrink, so the
    // batch-size search is offered.
    const host = oomActions(
      diagnosis({
        kind: 'host',
        framework: 'torch',
        causes: [{ cause: 'stale_references', gain_bytes: 1 }]
      }),
      'binary'
    );
    expect(host.map(a => a.id)).toEqual([
      'clear-traceback',
      'delete-holders',
      'free-memory',
      'estimate-memory',
      'insert-batch-size-search'
    ]);
    // A NumPy array has no training step, so no batch-size search is offered.
    const numpy = oomActions(
      diagnosis({
        kind: 'host',
        framework: 'numpy',
        causes: [{ cause: 'stale_references', gain_bytes: 1 }]
      }),
      'binary'
    );
    expect(numpy.map(a => a.id)).toEqual([
      'clear-traceback',
      'delete-holders',
      'free-memory'
    ]);
  });
});
