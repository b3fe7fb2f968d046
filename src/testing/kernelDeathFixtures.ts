/**
 * The set-up that the kernel-death specs share: host memory figures, in a
 * container or on a bare machine.
 */
import { HostMemory } from '../protocol/sample';
import { GiB } from './fixtures';

export const CONTAINER_HOST: HostMemory = {
  // The RSS is 22.8 GiB, and 0.7 GiB is left under a 24 GiB limit, with
  // 23.3 GiB in use.
  rss_bytes: 22.8 * GiB,
  total_bytes: 256 * GiB,
  available_bytes: 200 * GiB,
  container: {
    limit_bytes: 24 * GiB,
    usage_bytes: 23.3 * GiB,
    inactive_file_bytes: 0,
    oom_kill_count: 0,
    cgroup_version: 2
  }
};

/**
 * A machine without a container, with the kernel's RSS, the machine's RAM
 * and what is available.
 */
export function machine(
  rss: number,
  total: number,
  available: number
): HostMemory {
  return {
    rss_bytes: rss,
    total_bytes: total,
    available_bytes: available,
    container: null
  };
}
