/**
 * Whether a kernel sees no GPU at all, as far as its helper can tell.
 *
 * The helper lists devices from NVML until PyTorch has initialised CUDA,
 * then from PyTorch (it never initialises CUDA itself). An empty list is
 * therefore proof of "no GPU" only when NVML answered, or PyTorch is up, or
 * NVML failed because there is no NVIDIA driver at all. On a GPU machine
 * whose kernel lacks NVML's Python package, the list stays empty until the
 * first CUDA operation, so that case means "not known yet", never "no GPU".
 */
import type { HelloMessage } from '../protocol/messages';
import type { SampleMessage } from '../protocol/sample';

/**
 * NVML's failures that mean no NVIDIA driver is installed, so there is no GPU
 * to see.
 */
const NO_DRIVER =
  /shared library not found|library not found|driver not loaded/i;

/**
 * Returns true when the kernel sees no GPU, false when it sees one, and null
 * when that is not known yet. It reads the latest sample, or the hello
 * before the first sample.
 */
export function seesNoGpu(
  hello: Pick<
    HelloMessage,
    'nvml' | 'devices' | 'torch' | 'devices_wait_for_cuda'
  > | null,
  latest: Pick<SampleMessage, 'gpus' | 'torch'> | null
): boolean | null {
  if (!hello) {
    return null;
  }
  const count = latest ? latest.gpus.length : hello.devices.length;
  const cudaUp = latest
    ? latest.torch.cuda_initialized
    : !!hello.torch?.cuda_initialized;
  if (count > 0) {
    return false;
  }
  if (cudaUp) {
    return true;
  }
  if (hello.nvml.available) {
    // When MIG instances are named, NVML cannot say which of them the kernel
    // sees before CUDA starts.
    return hello.devices_wait_for_cuda ? null : true;
  }
  return hello.nvml.error !== null && NO_DRIVER.test(hello.nvml.error)
    ? true
    : null;
}
