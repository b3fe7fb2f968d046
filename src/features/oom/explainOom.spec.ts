/**
 * Tests for explainOom, which says an out-of-memory failure in sentences, both
 * with the figures the kernel read and without them.
 */
import { explainOom } from './oomExplanation';
import { UNKNOWN_TEXT } from '../../text/format';
import { OomDiagnosis } from '../../protocol/oom';
import {
  makeOomDiagnosis,
  UNKNOWN_OOM_FIGURES
} from '../../testing/cellFixtures';
import { GiB } from '../../testing/fixtures';

const diagnosis = makeOomDiagnosis;

describe('explainOom', () => {
  it('says what a request was too big for: the card, the memory cap, or what other processes leave', () => {
    const card = explainOom(
      diagnosis({
        requested_bytes: 100 * GiB,
        capacity_bytes: 79 * GiB,
        causes: [{ cause: 'too_big', gain_bytes: null }]
      }),
      'binary'
    );
    expect(card.causes[0].text).toMatch(
      /^Too big for the card: 100 GiB is more than the 80 GiB it has/
    );
    const others = explainOom(
      diagnosis({
        requested_bytes: 10 * GiB,
        other_processes_bytes: 70 * GiB,
        capacity_bytes: 9 * GiB,
        causes: [
          { cause: 'too_big', gain_bytes: null },
          { cause: 'other_processes', gain_bytes: 70 * GiB }
        ]
      }),
      'binary'
    );
    expect(others.causes[0].text).toBe(
      "Too big for what this kernel can get: 10 GiB is more than the 9 GiB left to it of the card's 80 GiB " +
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
      diagnosis({
        kind: 'cuda_library',
        library: 'cuBLAS',
        requested_bytes: null,
        reserved_unallocated_bytes: GiB,
        num_alloc_retries: null,
        causes: fragmentation
      }),
      'binary'
    );
    expect(library.causes[0].text).toBe(
      "Fragmentation: PyTorch's cache holds 1 GiB reserved but unallocated, which cuBLAS cannot use: " +
        'it allocates outside that cache; torch.cuda.empty_cache() gives it back.'
    );
    const part = explainOom(
      diagnosis({
        requested_bytes: 3 * GiB,
        reserved_unallocated_bytes: GiB,
        num_alloc_retries: null,
        causes: fragmentation
      }),
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
    expect(text.causes[1].text).toContain(
      'activations: 3 GiB, the last traceback: 1 GiB'
    );
    expect(text.causes[2].text).toContain('pid 4242 (2 GiB)');
    expect(text.figures).toContainEqual({
      key: 'retries',
      label: 'Allocation retries',
      value: '3'
    });
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
    expect(host.causes[0].text).toMatch(
      /^Too big for the machine: 8 TiB is more than the 24 GiB/
    );
    expect(host.figures[1]).toEqual({
      key: 'free',
      label: 'Available',
      value: '20 GiB'
    });
    expect(host.figures[2]).toEqual({
      key: 'total',
      label: 'Total RAM',
      value: '24 GiB'
    });
    // In a container the helper measures against the container's limit, so the
    // words must name that limit rather than the machine's RAM.
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
    expect(contained.figures[2]).toEqual({
      key: 'total',
      label: 'Container limit',
      value: '4 GiB'
    });
    expect(contained.causes[0].text).toMatch(
      /^Too big for the container: 8 GiB is more than the 4 GiB/
    );
    const cublas = explainOom(
      diagnosis({
        kind: 'cuda_library',
        library: 'cuBLAS',
        requested_bytes: null,
        causes: []
      }),
      'binary'
    );
    expect(cublas.headline).toBe(
      'The cell ran out of GPU 0 (cuBLAS) memory: cuBLAS could not get memory for its workspace.'
    );
    expect(cublas.causes[0].cause).toBe('unknown');
  });
});

describe('explainOom: figures the kernel could not read', () => {
  // Every figure is unknown, and the holders and processes are listed without
  // sizes, as when the kernel could read none of them.
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
      {
        holder: 'last_traceback',
        label: 'Traceback of the last error',
        bytes: 0
      }
    ],
    in_use_holders: [{ holder: 'name', label: 'model', bytes: 0 }]
  };
  const CAUSES = [
    'too_big',
    'fragmentation',
    'stale_references',
    'other_processes'
  ];
  const reads = (text: string) => {
    expect(text).not.toContain(UNKNOWN_TEXT);
    expect(text).not.toMatch(/ 0 B\b/);
    // A dropped figure must not leave an empty parenthesis behind.
    expect(text).not.toMatch(/\s\(\s*\)/);
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

  it.each(CAUSES)(
    '%s reads as a sentence on every device, in both units, in and out of a container',
    cause => {
      for (const kind of kinds) {
        for (const units of ['binary', 'decimal'] as const) {
          for (const container of [false, true]) {
            const d = diagnosis({
              ...unknown,
              ...kind,
              causes: [{ cause, gain_bytes: null }]
            });
            const text = explainOom(d, units, null, container);
            reads(text.headline);
            expect(text.causes.map(c => c.cause)).toEqual([cause]);
            reads(text.causes[0].text);
          }
        }
      }
    }
  );

  it('says each cause without the figures it lacks', () => {
    const text = (overrides: Partial<OomDiagnosis>) =>
      explainOom(diagnosis({ ...unknown, ...overrides }), 'binary').causes[0]
        .text;
    const only = (cause: string) => [{ cause, gain_bytes: null }];
    expect(text({ causes: only('stale_references') })).toBe(
      'Stale references: this notebook still holds memory on this device (x, the last traceback) ' +
        'that the failing cell does not use; not counted: model, which it does.'
    );
    expect(text({ causes: only('other_processes') })).toBe(
      'Other processes hold memory on this card: pid 4242, pid 4343.'
    );
    expect(
      text({
        kind: 'host',
        device_index: null,
        causes: only('other_processes')
      })
    ).toBe(
      'Memory used by the rest of the machine: its RAM is partly taken by everything but this kernel ' +
        '(other programs, the system and its caches).'
    );
    expect(text({ causes: only('fragmentation') })).toBe(
      "Fragmentation: PyTorch's cache holds memory reserved but unallocated; torch.cuda.empty_cache() gives it back."
    );
    // The request is known but the cache is not, so the text must claim neither
    // that the cache is more than the request nor that it is less.
    expect(
      text({
        requested_bytes: 2 * GiB,
        num_alloc_retries: 3,
        causes: only('fragmentation')
      })
    ).toBe(
      "Fragmentation: PyTorch's cache holds memory reserved but unallocated, in pieces too small for the 2 GiB " +
        'asked for (the allocator already retried 3 times).'
    );
    // When the cache figure is missing, the text gives the cause's gain instead,
    // the same figure that the actions show.
    expect(
      text({
        requested_bytes: null,
        causes: [{ cause: 'fragmentation', gain_bytes: GiB }]
      })
    ).toBe(
      "Fragmentation: PyTorch's cache holds 1 GiB reserved but unallocated; torch.cuda.empty_cache() gives it back."
    );
    expect(text({ causes: only('too_big') })).toBe(
      'Too big for what this kernel can get: the request is more than what is left to it of the card once ' +
        'its CUDA context is counted, even if it freed everything. The work itself must shrink: ' +
        'a smaller batch, mixed precision, gradient checkpointing or accumulation.'
    );
    expect(
      text({
        requested_bytes: 10 * GiB,
        capacity_bytes: 9 * GiB,
        causes: only('too_big')
      })
    ).toMatch(
      /^Too big for what this kernel can get: 10 GiB is more than the 9 GiB left to it of the card once/
    );
    expect(
      text({
        capacity_bytes: 20 * GiB,
        allowed_bytes: 20 * GiB,
        causes: only('too_big')
      })
    ).toMatch(
      /^Too big for this kernel's memory cap: the request is more than the 20 GiB that torch/
    );
    // With no causes left, only the cell's own objects hold memory, and they
    // have no sizes.
    expect(text({ causes: [] })).toMatch(
      /^The failing cell's own objects hold the memory \(model\), and nothing/
    );
  });

  it('still names each figure it has', () => {
    const text = explainOom(diagnosis(), 'binary').causes.map(c => c.text);
    expect(text[1]).toBe(
      'Stale references: this notebook still holds 4 GiB on this device (activations: 3 GiB, the last traceback: 1 GiB).'
    );
    expect(text[2]).toBe(
      'Other processes hold 2 GiB on this card: pid 4242 (2 GiB).'
    );
  });
});
