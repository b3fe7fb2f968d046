/**
 * The figures the UI shows for one GPU, derived from a sample: who holds what
 * of the device. Kept out of the views so that the sidebar card and the
 * status bar agree, and so that the arithmetic is unit-tested.
 *
 * An unknown figure stays null all the way through, so a derived figure is
 * null as soon as one of its inputs is.
 */
import { DeviceInfo } from '../protocol/messages';
import { GpuSample } from '../protocol/sample';
import { percentOf } from '../text/format';

/** The figures the UI shows for one GPU. */
export interface GpuFigures {
  index: number;
  name: string | null;
  total: number | null;
  /** PyTorch: memory held by live tensors. */
  allocated: number | null;
  /** PyTorch: memory held by the caching allocator (allocated + cached). */
  reserved: number | null;
  /** reserved - allocated: cached, reusable by PyTorch, not by others. */
  cached: number | null;
  /** PyTorch: peak of `allocated` since the last reset. */
  peak: number | null;
  /** Reserved but unusable (inactive split blocks): fragmentation. */
  fragmentation: number | null;
  numOoms: number | null;
  numAllocRetries: number | null;
  /** NVML: used on the device by all processes. */
  deviceUsed: number | null;
  /** NVML: used by this kernel process. */
  processUsed: number | null;
  /** deviceUsed - processUsed. */
  otherProcesses: number | null;
  /** processUsed - reserved: CUDA context, cuBLAS/cuDNN workspaces. */
  contextAndLibraries: number | null;
  /** total - deviceUsed. */
  free: number | null;
  tensorflowCurrent: number | null;
  tensorflowPeak: number | null;
  /** What this kernel holds on the device, best known figure. */
  kernelUsed: number | null;
  /** Share of the device in use (by anyone if known, else by this kernel). */
  usedPercent: number | null;
}

function difference(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : Math.max(0, a - b);
}

/** Figures of a GPU from its sample entry (and its hello entry, if any). */
export function gpuFigures(
  gpu: GpuSample,
  device?: DeviceInfo | null
): GpuFigures {
  const torch = gpu.torch;
  const nvml = gpu.nvml;
  const tf = gpu.tensorflow;
  const total =
    gpu.total_bytes ?? nvml?.total_bytes ?? device?.total_bytes ?? null;
  const allocated = torch?.allocated_bytes ?? null;
  const reserved = torch?.reserved_bytes ?? null;
  const deviceUsed = nvml?.used_bytes ?? null;
  const processUsed = nvml?.process_used_bytes ?? null;
  const tensorflowCurrent = tf?.current_bytes ?? null;
  // Without NVML's figure for this process: what its frameworks hold, both of them.
  const kernelUsed =
    processUsed ??
    (reserved === null && tensorflowCurrent === null
      ? null
      : (reserved ?? 0) + (tensorflowCurrent ?? 0));
  return {
    index: gpu.index,
    name: gpu.name ?? device?.name ?? null,
    total,
    allocated,
    reserved,
    cached: difference(reserved, allocated),
    peak: torch?.peak_allocated_bytes ?? null,
    fragmentation: torch?.inactive_split_bytes ?? null,
    numOoms: torch?.num_ooms ?? null,
    numAllocRetries: torch?.num_alloc_retries ?? null,
    deviceUsed,
    processUsed,
    otherProcesses: difference(deviceUsed, processUsed),
    contextAndLibraries: difference(processUsed, reserved),
    // NVML's own: total less used is more by the driver's reservation.
    free: nvml?.free_bytes ?? difference(total, deviceUsed),
    tensorflowCurrent,
    tensorflowPeak: tf?.peak_bytes ?? null,
    kernelUsed,
    usedPercent: percentOf(deviceUsed ?? kernelUsed, total)
  };
}

/** Figures of a device known only from the hello (no sample yet). */
export function deviceFigures(device: DeviceInfo): GpuFigures {
  return gpuFigures(
    {
      index: device.index,
      name: device.name,
      total_bytes: device.total_bytes,
      torch: null,
      nvml: null,
      tensorflow: null
    },
    device
  );
}
