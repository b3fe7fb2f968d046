/**
 * The figures the UI shows for one GPU, derived from a sample: who holds how
 * much of the device. They are kept out of the views so that the sidebar
 * card and the status bar agree, and so that the arithmetic is unit-tested.
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
  /** PyTorch's memory held by live tensors. */
  allocated: number | null;
  /**
   * PyTorch's memory held by the caching allocator, which is allocated plus
   * cached.
   */
  reserved: number | null;
  /**
   * Reserved less allocated: the cached memory, which PyTorch can reuse but
   * other processes cannot.
   */
  cached: number | null;
  /** PyTorch's peak of `allocated` since the last reset. */
  peak: number | null;
  /**
   * Memory reserved but unusable because it sits in inactive split blocks;
   * this is fragmentation.
   */
  fragmentation: number | null;
  numOoms: number | null;
  numAllocRetries: number | null;
  /** NVML's figure for the memory used on the device by all processes. */
  deviceUsed: number | null;
  /** NVML's figure for the memory used by this kernel process. */
  processUsed: number | null;
  /**
   * The memory used by other processes, which is deviceUsed less processUsed.
   */
  otherProcesses: number | null;
  /**
   * processUsed less reserved, which is the CUDA context and the cuBLAS and
   * cuDNN workspaces.
   */
  contextAndLibraries: number | null;
  /** The free memory, which is total less deviceUsed. */
  free: number | null;
  tensorflowCurrent: number | null;
  tensorflowPeak: number | null;
  /** What this kernel holds on the device, by the best figure known. */
  kernelUsed: number | null;
  /**
   * The share of the device in use, by anyone if that is known and
   * otherwise by this kernel.
   */
  usedPercent: number | null;
}

function difference(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : Math.max(0, a - b);
}

/**
 * The figures of a GPU from its sample entry, and from its hello entry if there
 * is one.
 */
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
  // Without NVML's figure for this process, what the kernel holds is taken
  // as the sum of what both of its frameworks hold.
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
    // NVML's own free figure is preferred, because total less used
    // overstates it by the driver's reservation.
    free: nvml?.free_bytes ?? difference(total, deviceUsed),
    tensorflowCurrent,
    tensorflowPeak: tf?.peak_bytes ?? null,
    kernelUsed,
    usedPercent: percentOf(deviceUsed ?? kernelUsed, total)
  };
}

/** The figures of a device known only from the hello, before any sample. */
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
