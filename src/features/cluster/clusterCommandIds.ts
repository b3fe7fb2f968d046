/**
 * Which command runs which cluster action, so that the section's buttons
 * and the commands name the same ones without loading each other's code.
 */
import type { ClusterActionName } from '../../protocol/cluster';
import { CommandIDs } from '../../ui/commandIds';

/** The command of each cluster action. */
export const CLUSTER_ACTION_COMMANDS: Readonly<
  Record<ClusterActionName, string>
> = {
  gc: CommandIDs.clusterGc,
  empty_cache: CommandIDs.clusterEmptyCache,
  restart: CommandIDs.clusterRestart,
  read_allocators: CommandIDs.clusterReadAllocators
};
