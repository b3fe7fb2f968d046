/**
 * The diagnosis's figures as they stand now. The diagnosis describes the
 * moment a cell failed; once the user frees memory or deletes what held it,
 * those figures no longer say where things stand, and a fix that worked
 * would look as if it did nothing. The latest sample reads some of the same
 * figures again, and those are shown beside the ones at the failure.
 */
import { OomDiagnosis } from '../../protocol/oom';
import { SampleMessage } from '../../protocol/sample';
import { gpuFigures } from '../../model/gpuFigures';
import { hostFigures } from '../../model/hostFigures';
import { OomFigureKey } from './oomExplanation';

/** The figures the latest sample reads again; a figure it cannot read is absent. */
export type OomFiguresNow = Partial<Record<OomFigureKey, number>>;

/**
 * Reads from the latest sample the current values of the figures that a
 * diagnosis quotes from the time of the failure.
 */
export function oomFiguresNow(
  d: OomDiagnosis,
  sample: SampleMessage | null
): OomFiguresNow {
  const now: OomFiguresNow = {};
  if (!sample) {
    return now;
  }
  const put = (key: OomFigureKey, value: number | null | undefined) => {
    if (typeof value === 'number' && Number.isFinite(value)) {
      now[key] = value;
    }
  };
  if (d.kind === 'host') {
    const host = hostFigures(sample.host);
    put('free', host.available);
    put('process', sample.host.rss_bytes);
    return now;
  }
  const gpu = sample.gpus.find(g => g.index === d.device_index);
  if (d.device_index === null || !gpu) {
    return now;
  }
  // These are the panel's own figures of the device, as its card shows them.
  const figures = gpuFigures(gpu);
  put('free', figures.free);
  put('process', figures.processUsed);
  put('allocated', figures.allocated);
  put('reservedUnallocated', figures.cached);
  // The other processes are counted as the diagnosis counts them: those that
  // NVML lists besides this one. Where NVML does not name this kernel (in a
  // container's own pid namespace, process_used_bytes is null), the kernel is
  // among them, so no figure is given rather than a false one.
  const named =
    gpu.nvml?.process_used_bytes !== null &&
    gpu.nvml?.process_used_bytes !== undefined;
  const others = named
    ? gpu.nvml?.processes?.filter(p => !p.this_process)
    : undefined;
  // A process of unknown size, which there is no permission to read, leaves
  // no total.
  if (others && others.every(p => p.used_bytes !== null)) {
    put(
      'otherProcesses',
      others.reduce((sum, p) => sum + (p.used_bytes ?? 0), 0)
    );
  }
  return now;
}
