/**
 * The out-of-memory assistant when the kernel's own processes hold the
 * memory: the words name them, with the docs' example of a vLLM engine on
 * the card; the first fixes release the engine or stop the child, asking
 * first; and a DataLoader worker that the out-of-memory killer took is
 * explained with the workers' figures and offered the snippet that fits.
 */
import { CommandIDs } from '../../ui/commandIds';
import type { OomDiagnosis } from '../../protocol/oom';
import { makeOomDiagnosis } from '../../testing/cellFixtures';
import { GiB, MiB } from '../../testing/fixtures';
import { DEFAULT_SNIPPETS } from '../snippets/defaultSnippets';
import { oomActions } from './oomActions';
import { explainOom } from './oomExplanation';

function onTheCard(overrides: Partial<OomDiagnosis> = {}): OomDiagnosis {
  return makeOomDiagnosis({
    requested_bytes: 20 * GiB,
    total_bytes: 80 * GiB,
    free_bytes: 3.5 * GiB,
    allocated_bytes: 5 * GiB,
    reserved_unallocated_bytes: 100 * MiB,
    process_in_use_bytes: 5.6 * GiB,
    other_processes_bytes: 72 * GiB,
    other_processes: [
      {
        pid: 4312,
        used_bytes: 70 * GiB,
        child_of_kernel: true,
        start_time: 2729022,
        role: 'vllm_engine',
        remedies: ['release_engine', 'stop_process'],
        release: { kind: 'vllm', name: 'llm' }
      },
      {
        pid: 4400,
        used_bytes: 2 * GiB,
        child_of_kernel: true,
        start_time: 2729100,
        role: 'mp_process',
        remedies: ['stop_process'],
        release: null
      },
      { pid: 999, used_bytes: 1 * GiB }
    ],
    stale_bytes: 0,
    stale_holders: [],
    causes: [{ cause: 'child_processes', gain_bytes: 72 * GiB }],
    ...overrides
  });
}

describe("the kernel's own processes on the failing card", () => {
  it('names them with their roles and figures, and says the kernel can get the memory back', () => {
    const { causes } = explainOom(onTheCard(), 'binary', 7);
    expect(causes).toEqual([
      {
        cause: 'child_processes',
        text:
          "This kernel's own processes hold 72 GiB on this card: vLLM engine pid 4312 (70 GiB), multiprocessing process pid 4400 (2 GiB). " +
          'The kernel started them, so it can get that back: release what started them, or stop them.'
      }
    ]);
  });

  it('offers Release for the engine and Stop for the other child first, never for a process it did not start', () => {
    const actions = oomActions(onTheCard(), 'binary');
    expect(actions.slice(0, 2).map(a => [a.id, a.label, a.steps])).toEqual([
      [
        'release-vllm-llm',
        'Release vLLM engine \u201cllm\u201d',
        [
          {
            command: CommandIDs.releaseEngine,
            args: { kind: 'vllm', name: 'llm' }
          }
        ]
      ],
      [
        'stop-4400',
        'Stop multiprocessing process pid 4400',
        [
          {
            command: CommandIDs.stopProcess,
            args: { pid: 4400, startTime: 2729100 }
          }
        ]
      ]
    ]);
    expect(actions[0].gain).toContain('Gives back up to 70 GiB on this card');
    expect(actions[0].gain).toContain('asks first');
    expect(actions.some(a => a.id === 'stop-999')).toBe(false);
  });

  it('offers one Release for several processes of one engine, and at most three', () => {
    const child = (pid: number, release: string | null) => ({
      pid,
      used_bytes: GiB,
      child_of_kernel: true,
      start_time: pid,
      role: 'mp_pool_worker',
      remedies: release ? ['release_engine', 'stop_process'] : ['stop_process'],
      release: release ? { kind: 'mp_pool', name: release } : null
    });
    const ids = oomActions(
      onTheCard({
        other_processes: [
          child(1, 'pool'),
          child(2, 'pool'),
          child(3, null),
          child(4, null),
          child(5, null)
        ]
      }),
      'binary'
    ).map(a => a.id);
    expect(ids.slice(0, 3)).toEqual([
      'release-mp_pool-pool',
      'stop-3',
      'stop-4'
    ]);
    expect(ids).not.toContain('stop-5');
  });
});

describe('a DataLoader worker killed by the out-of-memory killer', () => {
  const killed = makeOomDiagnosis({
    kind: 'host',
    framework: 'torch',
    device_index: null,
    requested_bytes: null,
    causes: [{ cause: 'dataloader_workers', gain_bytes: 12 * GiB }],
    dataloader_workers: {
      killed_pids: [5001],
      signal: 'Killed',
      workers: [
        {
          pid: 5001,
          start_time: 2731000,
          killed: true,
          host_bytes: 6 * GiB,
          uss_bytes: 6 * GiB,
          uss_growth_bytes: 5.6 * GiB,
          read_at: 1732200100.5
        },
        {
          pid: 5002,
          start_time: 2731001,
          killed: false,
          host_bytes: 6 * GiB,
          uss_bytes: 6 * GiB,
          uss_growth_bytes: 5.6 * GiB,
          read_at: 1732200100.2
        }
      ],
      workers_host_bytes: 12 * GiB,
      uss_growth_bytes: 11.25 * GiB,
      copy_on_write: true,
      snippet: 'dataloader-worker-memory'
    }
  });

  it('says which worker was killed, what the workers held, and the copy-on-write growth', () => {
    const [cause] = explainOom(killed, 'binary', 3).causes;
    expect(cause.cause).toBe('dataloader_workers');
    expect(cause.text).toContain(
      'DataLoader worker pid 5001 was killed by SIGKILL, which is what the out-of-memory killer sends'
    );
    expect(cause.text).toContain('Its 2 workers held 12 GiB together');
    expect(cause.text).toContain('Their own memory grew by 11.3 GiB');
    expect(cause.text).toContain('reference count');
  });

  it('does not blame copy-on-write when the figures do not show it', () => {
    const [cause] = explainOom(
      {
        ...killed,
        dataloader_workers: {
          ...killed.dataloader_workers!,
          copy_on_write: false
        }
      },
      'binary'
    ).causes;
    expect(cause.text).not.toContain('reference count');
    expect(cause.text).toContain('Fewer workers');
  });

  it('offers the snippet the helper named first, and it is a default snippet', () => {
    const [first] = oomActions(killed, 'binary');
    expect(first.steps).toEqual([
      {
        command: CommandIDs.insertSnippet,
        args: { id: 'dataloader-worker-memory' }
      }
    ]);
    expect(
      DEFAULT_SNIPPETS.some(s => s.id === 'dataloader-worker-memory')
    ).toBe(true);
  });
});

describe("the kernel's own processes in a host out-of-memory error", () => {
  const host = makeOomDiagnosis({
    kind: 'host',
    framework: null,
    device_index: null,
    requested_bytes: 4 * GiB,
    total_bytes: 16 * GiB,
    free_bytes: GiB,
    allocated_bytes: null,
    reserved_unallocated_bytes: null,
    process_in_use_bytes: 2 * GiB,
    other_processes_bytes: 13 * GiB,
    other_processes: [
      {
        pid: 6001,
        used_bytes: 5 * GiB,
        child_of_kernel: true,
        start_time: 1,
        role: 'mp_pool_worker',
        remedies: ['release_engine', 'stop_process'],
        release: { kind: 'mp_pool', name: 'pool' }
      }
    ],
    stale_bytes: 0,
    stale_holders: [],
    causes: [{ cause: 'child_processes', gain_bytes: 5 * GiB }]
  });

  it('speaks of host RAM, not of a card', () => {
    const [cause] = explainOom(host, 'binary').causes;
    expect(cause.text).toBe(
      "This kernel's own processes hold 5 GiB of host RAM: multiprocessing pool worker pid 6001 (5 GiB). " +
        'The kernel started them, so it can get that back: release what started them, or stop them.'
    );
    const [first] = oomActions(host, 'binary');
    expect(first.id).toBe('release-mp_pool-pool');
    expect(first.gain).toContain('Gives back up to 5 GiB of host RAM');
  });
});
