/**
 * The figures of the Kernels tab: one row per kernel the extension monitors,
 * with its notebooks, state, host RAM and GPU use, and the other processes
 * that NVML lists on the same GPUs. They are pure functions of what the
 * monitor's sessions know, and this module has no DOM.
 *
 * Which processes are "other"? A GPU process is a monitored kernel when its
 * pid is that kernel's (from the kernel's hello) on the same host, whichever
 * kernel's sample listed it; everything else that NVML lists is another
 * process. Pids are compared per hostname, because kernels on other
 * machines or in containers have pid spaces of their own.
 */
import { ISignal } from '@lumino/signaling';

import { HelloMessage } from '../../protocol/messages';
import { SampleMessage } from '../../protocol/sample';
import { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import { gpuFigures } from '../../model/gpuFigures';
import { seesNoGpu } from '../../model/gpuVisibility';
import { IMonitoredSessionEntry } from '../../monitor/monitoredSession';
import { MonitorState } from '../../model/MonitorState';
import { trans } from '../../text/translation';

/** Where the Kernels tab gets its sessions, which is the MemoryMonitor. */
export interface IKernelSessionSource {
  sessions(): IMonitoredSessionEntry[];
  readonly sessionsChanged: ISignal<any, void>;
}

/** What the overview reads of one monitored session; tests pass fakes. */
export interface KernelSource {
  kernelId: string | null;
  /** The kernel spec's name, such as `python3`. */
  kernelName: string | null;
  /**
   * The kernel's name as the notebook toolbar shows it, such as `Python 3
   * (ipykernel)`.
   */
  displayName: string | null;
  /** The paths of the notebooks open on this session. */
  paths: string[];
  state: MonitorState;
  stateReason: string;
  busy: boolean;
  hello: HelloMessage | null;
  latest: SampleMessage | null;
}

/** One GPU's memory as used by one kernel. */
export interface KernelGpuUse {
  index: number;
  name: string | null;
  bytes: number | null;
  /**
   * Where the figure comes from. 'nvml' is what the driver attributes to the
   * kernel process, which is everything it holds, CUDA context included.
   * 'torch' is PyTorch's reserved bytes, used when NVML cannot attribute the
   * process. 'tensorflow' is TensorFlow's figure, used when neither NVML nor
   * PyTorch has one. Null means unknown. The figure is the sidebar's own
   * "this kernel" figure (gpuFigures' kernelUsed).
   */
  source: 'nvml' | 'torch' | 'tensorflow' | null;
}

/**
 * What the Kernels tab shows of one kernel, read out of its source's fields.
 */
export interface KernelRow extends Omit<KernelSource, 'hello' | 'latest'> {
  /**
   * A key that is stable per kernel, or per notebook while it has no kernel.
   */
  key: string;
  pid: number | null;
  hostname: string | null;
  /** True once a sample came in. */
  sampled: boolean;
  /**
   * True when the kernel is known to see no GPU (see gpuVisibility.ts), and
   * false when it sees one. It is null when that is not known, because
   * without NVML and before CUDA starts an empty list proves nothing, or
   * when no sample came yet.
   */
  seesNoGpu: boolean | null;
  hostRssBytes: number | null;
  gpus: KernelGpuUse[];
}

/** A process on a GPU that is none of the monitored kernels. */
export interface OtherGpuProcess {
  pid: number;
  hostname: string;
  /** The GPU's CUDA ordinal as the reporting kernel numbers it. */
  gpuIndex: number;
  gpuName: string | null;
  usedBytes: number | null;
}

/**
 * Whether other GPU processes can be seen, and if not, why not:
 * - 'no-kernels': nothing is monitored.
 * - 'waiting': no kernel has sent its hello and a sample yet.
 * - 'no-gpus': every kernel is known to see no GPU, because NVML lists
 *   none, PyTorch reports none, or there is no NVIDIA driver at all (see
 *   gpuVisibility.ts).
 * - 'nvml-unavailable': no kernel can use NVML, though some may see GPUs.
 * - 'not-listed': NVML did not list the processes, or the helper is older.
 * - 'listed': at least one GPU's process list came in.
 */
export type GpuProcessVisibility =
  | 'no-kernels'
  | 'waiting'
  | 'nvml-unavailable'
  | 'no-gpus'
  | 'not-listed'
  | 'listed';

/**
 * The figures of the Kernels tab: one row per monitored kernel, and the other
 * processes on the same GPUs.
 */
export interface KernelsOverview {
  rows: KernelRow[];
  others: OtherGpuProcess[];
  visibility: GpuProcessVisibility;
  /**
   * Why NVML is not available, as the first kernel gives the reason, if it is
   * not.
   */
  nvmlError: string | null;
}

/** The GPU figure of each device in `sample`: NVML's, or else PyTorch's. */
export function kernelGpuUse(
  sample: SampleMessage | null,
  hello: Pick<HelloMessage, 'devices'> | null = null
): KernelGpuUse[] {
  if (!sample) {
    return [];
  }
  return sample.gpus.map(gpu => {
    // This is the sidebar's own figure, kernelUsed, which is NVML's, or else
    // PyTorch's, or else TensorFlow's.
    const f = gpuFigures(
      gpu,
      hello?.devices.find(d => d.index === gpu.index)
    );
    const source: KernelGpuUse['source'] =
      f.processUsed !== null
        ? 'nvml'
        : f.reserved !== null
          ? 'torch'
          : f.tensorflowCurrent !== null
            ? 'tensorflow'
            : null;
    return { index: gpu.index, name: f.name, bytes: f.kernelUsed, source };
  });
}

/**
 * The row of a kernel, shown by `source` (a session with figures), for the
 * notebooks at `paths`.
 */
function kernelRow(source: KernelSource, paths: string[]): KernelRow {
  return {
    key: rowKey(source),
    kernelId: source.kernelId,
    kernelName: source.kernelName,
    displayName: source.displayName,
    paths,
    state: source.state,
    stateReason: source.stateReason,
    busy: source.busy,
    pid: source.hello?.pid ?? null,
    hostname: source.hello?.hostname ?? null,
    sampled: source.latest !== null,
    seesNoGpu: source.latest ? seesNoGpu(source.hello, source.latest) : null,
    hostRssBytes: source.latest?.host.rss_bytes ?? null,
    gpus: kernelGpuUse(source.latest, source.hello)
  };
}

function rowKey(source: KernelSource): string {
  return source.kernelId !== null
    ? `kernel:${source.kernelId}`
    : `no-kernel:${source.paths.join('\n')}`;
}

/**
 * Makes one row per kernel. Sessions that share a kernel, as when a
 * notebook is attached to another notebook's kernel, become one row naming
 * all their notebooks, with the figures of the first that has a sample.
 */
export function kernelRows(sources: readonly KernelSource[]): KernelRow[] {
  const groups = new Map<string, KernelSource[]>();
  for (const source of sources) {
    const key = rowKey(source);
    const group = groups.get(key);
    if (group) {
      group.push(source);
    } else {
      groups.set(key, [source]);
    }
  }
  return Array.from(groups.values(), group => {
    const paths: string[] = [];
    for (const path of group.flatMap(s => s.paths)) {
      if (!paths.includes(path)) {
        paths.push(path);
      }
    }
    return kernelRow(group.find(s => s.latest) ?? group[0], paths);
  });
}

/**
 * The processes NVML lists on the kernels' GPUs that are not a monitored
 * kernel, largest first. Each is listed once, because several kernels on
 * one GPU list the same processes.
 */
export function otherGpuProcesses(
  sources: readonly KernelSource[]
): OtherGpuProcess[] {
  const kernelPids = new Set<string>();
  for (const source of sources) {
    if (source.hello) {
      kernelPids.add(pidKey(source.hello.hostname, source.hello.pid));
    }
  }
  const found = new Map<string, OtherGpuProcess>();
  for (const source of sources) {
    const { hello, latest } = source;
    if (!hello || !latest) {
      // Without the hello, neither the host nor the kernel's own pid is
      // known.
      continue;
    }
    for (const gpu of latest.gpus) {
      for (const process of gpu.nvml?.processes ?? []) {
        if (
          process.this_process ||
          kernelPids.has(pidKey(hello.hostname, process.pid))
        ) {
          continue;
        }
        const device = hello.devices.find(d => d.index === gpu.index);
        // The same physical GPU may have another ordinal in another kernel
        // because of CUDA_VISIBLE_DEVICES, so its uuid names it across
        // kernels.
        const gpuKey = device?.uuid ?? `#${gpu.index}`;
        const key = `${pidKey(hello.hostname, process.pid)}\n${gpuKey}`;
        const seen = found.get(key);
        if (!seen || (seen.usedBytes ?? -1) < (process.used_bytes ?? -1)) {
          found.set(key, {
            pid: process.pid,
            hostname: hello.hostname,
            gpuIndex: gpu.index,
            gpuName: gpu.name,
            usedBytes: process.used_bytes
          });
        }
      }
    }
  }
  return Array.from(found.values()).sort(
    (a, b) =>
      (b.usedBytes ?? -1) - (a.usedBytes ?? -1) ||
      a.pid - b.pid ||
      a.gpuIndex - b.gpuIndex
  );
}

function pidKey(hostname: string, pid: number): string {
  return `${hostname}\n${pid}`;
}

/** Whether, and why not, other GPU processes can be seen. */
export function gpuProcessVisibility(
  sources: readonly KernelSource[]
): GpuProcessVisibility {
  if (sources.length === 0) {
    return 'no-kernels';
  }
  const reporting = sources.filter(s => s.hello && s.latest);
  if (reporting.length === 0) {
    return 'waiting';
  }
  if (reporting.every(s => seesNoGpu(s.hello, s.latest) === true)) {
    return 'no-gpus';
  }
  const withNvml = reporting.filter(s => s.hello!.nvml.available);
  if (withNvml.length === 0) {
    return 'nvml-unavailable';
  }
  const gpus = withNvml.flatMap(s => s.latest!.gpus.filter(g => g.nvml));
  if (gpus.length === 0) {
    // NVML gave no per-GPU figures. That means no GPU at all only if no
    // kernel shows one, because another kernel may use a GPU through
    // PyTorch, or NVML did not match it.
    return reporting.every(s => s.latest!.gpus.length === 0)
      ? 'no-gpus'
      : 'not-listed';
  }
  return gpus.some(g => Array.isArray(g.nvml!.processes))
    ? 'listed'
    : 'not-listed';
}

/**
 * Works out the figures of the Kernels tab from what each monitored kernel
 * reported.
 */
export function kernelsOverview(
  sources: readonly KernelSource[]
): KernelsOverview {
  const visibility = gpuProcessVisibility(sources);
  const nvmlError =
    visibility === 'nvml-unavailable' || visibility === 'no-gpus'
      ? (sources.find(s => s.hello?.nvml.error)?.hello?.nvml.error ?? null)
      : null;
  return {
    rows: kernelRows(sources),
    others: visibility === 'listed' ? otherGpuProcesses(sources) : [],
    visibility,
    nvmlError
  };
}

/**
 * What the overview needs of a monitored session, read at the time of the call.
 */
export function kernelSourceOf(entry: {
  readonly model: Pick<
    IKernelMemoryModel,
    'state' | 'stateReason' | 'kernelBusy' | 'hello' | 'latest'
  >;
  readonly sessionContext: IMonitoredSessionEntry['sessionContext'];
  readonly panels: IMonitoredSessionEntry['panels'];
}): KernelSource {
  const context = entry.sessionContext;
  const kernel = context.session?.kernel ?? null;
  const paths: string[] = [];
  for (const panel of entry.panels) {
    const path = panel.sessionContext.path;
    if (typeof path === 'string' && path && !paths.includes(path)) {
      paths.push(path);
    }
  }
  return {
    kernelId: kernel?.id ?? null,
    kernelName: kernel?.name ?? null,
    displayName: kernel ? (context.kernelDisplayName ?? null) : null,
    paths,
    state: entry.model.state,
    stateReason: entry.model.stateReason,
    busy: entry.model.kernelBusy,
    hello: entry.model.hello,
    latest: entry.model.latest
  };
}

/**
 * The sentence under "Other GPU processes", which says what can and cannot be
 * seen.
 */
export function describeGpuProcessVisibility(
  overview: Pick<KernelsOverview, 'visibility' | 'nvmlError' | 'others'>
): string {
  switch (overview.visibility) {
    case 'no-kernels':
      return trans.__(
        'Open a notebook: the GPU processes are listed by its kernel.'
      );
    case 'waiting':
      return trans.__("Waiting for the kernels' memory helpers to report.");
    case 'nvml-unavailable':
      return overview.nvmlError
        ? trans.__(
            "No GPU process list: NVML is not available to these kernels (%1). Only each kernel's own PyTorch figures can be seen, not other processes on the GPUs.",
            overview.nvmlError
          )
        : trans.__(
            "No GPU process list: NVML is not available to these kernels. Only each kernel's own PyTorch figures can be seen, not other processes on the GPUs."
          );
    case 'no-gpus':
      return overview.nvmlError
        ? trans.__(
            'No GPU is visible to these kernels, so there are no GPU processes to list (NVML: %1).',
            overview.nvmlError
          )
        : trans.__(
            'No GPU is visible to these kernels, so there are no GPU processes to list.'
          );
    case 'not-listed':
      return trans.__(
        'No GPU process list: NVML did not list the processes on these GPUs (a container may hide them, or the kernel helper predates the list). Other processes on the GPUs cannot be seen.'
      );
    case 'listed':
      return overview.others.length
        ? trans.__(
            "Processes NVML lists on these GPUs that are none of the kernels above (pids as NVML reports them; in a container they may be the host's)."
          )
        : trans.__('NVML lists no other process on these GPUs.');
  }
}
