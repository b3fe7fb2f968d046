/**
 * The set-up the KernelHelperConnection specs share: a connection to a fake
 * kernel (or none) with a fixed sampling config.
 */
import { connectHelper, FakeKernel } from './fakeKernel';

export const CONFIG = {
  interval_s: 1,
  change_threshold_bytes: 1048576,
  heartbeat_s: 10
};

export function connect(
  kernel: FakeKernel | null,
  options: { requestTimeoutMs?: number } = {}
) {
  return connectHelper(kernel, { config: () => CONFIG, ...options });
}
