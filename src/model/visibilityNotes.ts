/**
 * "Why don't I see X?" notes, derived from the hello and the latest sample.
 *
 * An empty GPU card and "0 bytes" are not the same thing; these notes say
 * which case the user is in (torch not imported, CUDA not initialised, no GPU
 * visible, NVML unavailable, ...).
 *
 * Only the sidebar shows them, so this module loads with the sidebar rather
 * than at start-up. The sidebar hands `deriveVisibilityNotes` to the models
 * through KernelVisibilityNotes' `deriveNotesWith`.
 */
import { seesNoGpu } from './gpuVisibility';
import { NVML_UNATTRIBUTED_NOTE_AFTER_S } from './NvmlAttributionClock';
import { HelloMessage } from '../protocol/messages';
import { HiddenGpus, SampleMessage } from '../protocol/sample';
import { trans } from '../text/translation';

/** The stable id of each kind of visibility note. */
export type VisibilityNoteId =
  | 'torch-not-imported'
  | 'cuda-not-initialized'
  | 'no-gpu'
  | 'nvml-unavailable'
  | 'nvml-no-process'
  | 'tensorflow-imported'
  | 'tensorflow-gpus'
  | 'helper-problem'
  | 'settings-pending';

/** One note that explains why the panel shows less than the user may expect. */
export interface VisibilityNote {
  /** The stable id, which is also the `data-vram-note` attribute. */
  id: VisibilityNoteId;
  severity: 'info' | 'warning';
  /**
   * Plain text. It may contain text that the kernel supplied, so it must be
   * rendered as text, never as HTML.
   */
  text: string;
}

/** What the visibility notes are derived from. */
export interface VisibilityInputs {
  hello: HelloMessage | null;
  sample: SampleMessage | null;
  /** The latest malformed message or helper error, if any. */
  problem: string | null;
  /**
   * How long, in seconds, NVML has gone without attributing memory to the
   * kernel (see {@link nvmlCannotAttribute}). It counts from the first of the
   * samples that say so up to the latest, and on from then until a sample
   * says otherwise. It is null while NVML does attribute the memory, so when
   * it is set, the latest sample is one of those samples.
   */
  nvmlUnattributedForS: number | null;
  /** New sampling settings were sent while a cell ran and are not applied yet. */
  settingsPending?: boolean;
}

/** Derives the visibility notes that apply now. */
export function deriveVisibilityNotes(
  inputs: VisibilityInputs
): VisibilityNote[] {
  const { hello, sample, problem } = inputs;
  const notes: VisibilityNote[] = [];
  if (problem) {
    notes.push({ id: 'helper-problem', severity: 'warning', text: problem });
  }
  if (inputs.settingsPending) {
    notes.push({
      id: 'settings-pending',
      severity: 'info',
      text: trans.__(
        'The new sampling settings apply when the running cell finishes: the kernel reads requests between cells. Until then it samples as before.'
      )
    });
  }
  if (!hello && !sample) {
    return notes;
  }

  // The latest sample is fresher than the hello, and torch may have been
  // imported since the hello.
  const torchImported = sample ? sample.torch.imported : hello!.torch !== null;
  const cudaInitialized = sample
    ? sample.torch.cuda_initialized
    : !!hello!.torch?.cuda_initialized;
  const gpuCount = sample ? sample.gpus.length : hello!.devices.length;
  // Whether an empty list proves that there is no GPU (see gpuVisibility.ts)
  // is asked once here, for both notes that need it.
  const noGpu = gpuCount === 0 ? seesNoGpu(hello, sample) : false;

  if (gpuCount === 0) {
    // An empty device list proves "no GPU" only where NVML or PyTorch could
    // have listed one (see gpuVisibility.ts). Without NVML, GPUs show only
    // once PyTorch initialises CUDA.
    const known = noGpu !== null;
    const hidden = sample ? sample.hidden_gpus : (hello!.hidden_gpus ?? null);
    notes.push({
      id: 'no-gpu',
      severity: 'info',
      text: hidden
        ? hiddenGpusText(hidden)
        : known || !hello
          ? trans.__('No GPU is visible to this kernel: showing host RAM only.')
          : hello.devices_wait_for_cuda && !cudaInitialized
            ? trans.__(
                'No GPU seen yet: CUDA_VISIBLE_DEVICES names MIG instances, which show once PyTorch initialises CUDA. Until then: host RAM only.'
              )
            : hello.nvml.error
              ? trans.__(
                  'No GPU seen yet: NVML is not available to this kernel (%1), so GPUs show once PyTorch initialises CUDA. Until then: host RAM only.',
                  hello.nvml.error
                )
              : trans.__(
                  'No GPU seen yet: NVML is not available to this kernel, so GPUs show once PyTorch initialises CUDA. Until then: host RAM only.'
                )
    });
  }
  if (!torchImported) {
    notes.push({
      id: 'torch-not-imported',
      severity: 'info',
      text: trans.__(
        'PyTorch is not imported in this kernel, so there are no allocator figures (the monitor never imports it for you).'
      )
    });
  } else if (!cudaInitialized && gpuCount > 0) {
    notes.push({
      id: 'cuda-not-initialized',
      severity: 'info',
      text: trans.__(
        'PyTorch has not initialised CUDA yet: it has allocated nothing on the GPU. Allocator figures appear after its first CUDA operation.'
      )
    });
  }
  if (hello && !hello.nvml.available && gpuCount > 0) {
    notes.push({
      id: 'nvml-unavailable',
      severity: 'info',
      text: hello.nvml.error
        ? trans.__(
            'NVML is unavailable (%1): device-wide use, free memory and other processes are unknown.',
            hello.nvml.error
          )
        : trans.__(
            'NVML is unavailable: device-wide use, free memory and other processes are unknown.'
          )
    });
  }
  const unattributedFor = inputs.nvmlUnattributedForS;
  if (
    sample &&
    unattributedFor !== null &&
    unattributedFor >= NVML_UNATTRIBUTED_NOTE_AFTER_S
  ) {
    notes.push({
      id: 'nvml-no-process',
      severity: 'info',
      text: trans.__(
        'NVML cannot attribute GPU memory to this kernel process (common in containers): memory held by other processes is unknown.'
      )
    });
  }
  const tfImported = sample
    ? sample.tensorflow.imported
    : hello!.tensorflow !== null;
  const tfGpus = sample
    ? sample.tensorflow.gpus_initialized
    : !!hello!.tensorflow?.gpus_initialized;
  // TensorFlow's runtime comes up with its first operation, whether or not
  // there are GPUs, so on a machine proven to have none, its GPU advice
  // would be false.
  if (noGpu === true) {
    return notes;
  }
  if (tfGpus) {
    notes.push({
      id: 'tensorflow-gpus',
      severity: 'warning',
      text: trans.__(
        'TensorFlow has initialised its GPUs. Unless memory growth was enabled before that, it reserves nearly all GPU memory up front.'
      )
    });
  } else if (tfImported) {
    notes.push({
      id: 'tensorflow-imported',
      severity: 'info',
      text: trans.__(
        'TensorFlow is imported but has not initialised its GPUs yet; set TF_FORCE_GPU_ALLOW_GROWTH=true before it does to avoid it taking the whole GPU.'
      )
    });
  }
  return notes;
}

/** The longest CUDA_VISIBLE_DEVICES value that a note quotes whole. */
const QUOTED_VALUE_MAX = 60;

/**
 * Says that there is no GPU because the kernel's CUDA_VISIBLE_DEVICES hides
 * them, and quotes the value, because "no GPU" alone would send the user
 * looking for a driver problem.
 */
function hiddenGpusText(hidden: HiddenGpus): string {
  const value = hidden.cuda_visible_devices;
  const quoted =
    value.trim() === ''
      ? trans.__('is empty')
      : trans.__(
          'is "%1"',
          value.length > QUOTED_VALUE_MAX
            ? `${value.slice(0, QUOTED_VALUE_MAX)}\u2026`
            : value
        );
  return trans._n(
    "No GPU is visible to this kernel: its CUDA_VISIBLE_DEVICES %2, which hides the GPU NVML lists on this machine. Showing host RAM only. To use them, change or unset it before the kernel's first CUDA call (CUDA reads it once: after that, only a restarted kernel sees a change).",
    "No GPU is visible to this kernel: its CUDA_VISIBLE_DEVICES %2, which hides all %1 GPUs NVML lists on this machine. Showing host RAM only. To use them, change or unset it before the kernel's first CUDA call (CUDA reads it once: after that, only a restarted kernel sees a change).",
    hidden.count,
    quoted
  );
}
