import { seesNoGpu } from './gpuVisibility';
import { deriveVisibilityNotes } from './visibilityNotes';
import { makeCpuSample, makeHello, makeSample } from '../testing/fixtures';

const noNvml = (error: string | null) => ({
  available: false,
  driver_version: null,
  error
});
const idleTorch = { imported: true, cuda_initialized: false };

describe('whether a kernel sees no GPU', () => {
  it('is known where NVML answered, PyTorch is up, or there is no NVIDIA driver', () => {
    expect(seesNoGpu(makeHello({ devices: [] }), makeCpuSample())).toBe(true); // NVML lists none
    expect(
      seesNoGpu(
        makeHello({ nvml: noNvml('cannot import pynvml'), devices: [] }),
        makeCpuSample({ torch: { imported: true, cuda_initialized: true } })
      )
    ).toBe(true); // PyTorch is up and reports none
    expect(
      seesNoGpu(
        makeHello({
          nvml: noNvml('nvmlInit failed: NVML Shared Library Not Found'),
          devices: []
        }),
        makeCpuSample()
      )
    ).toBe(true); // no driver, no GPU
    expect(seesNoGpu(makeHello(), makeSample())).toBe(false);
  });

  it('is not known on a machine whose kernel lacks NVML, until PyTorch initialises CUDA', () => {
    const hello = makeHello({
      nvml: noNvml('cannot import pynvml'),
      devices: [],
      torch: { version: '2.5.1', cuda_build: '12.4', cuda_initialized: false }
    });
    expect(seesNoGpu(hello, makeCpuSample({ torch: idleTorch }))).toBeNull();
    expect(seesNoGpu(hello, null)).toBeNull(); // from the hello alone
    expect(seesNoGpu(null, makeCpuSample())).toBeNull();
    // The Memory tab says so, rather than "no GPU".
    const [note] = deriveVisibilityNotes({
      hello,
      sample: makeCpuSample({ torch: idleTorch }),
      problem: null,
      nvmlUnattributedForS: null
    });
    expect(note.id).toBe('no-gpu');
    expect(note.text).toBe(
      'No GPU seen yet: NVML is not available to this kernel (cannot import pynvml), so GPUs show once PyTorch initialises CUDA. Until then: host RAM only.'
    );
  });
});
