/**
 * The words for a role of one of the kernel's processes (docs/protocol.md,
 * "The kernel's processes"), shared by the Processes tab, the
 * out-of-memory assistant and the explanation of a kernel's death.
 */
import { trans } from './translation';

/** A role's words, translated when shown; an unknown role is said as it came. */
export function roleText(role: string): string {
  switch (role) {
    case 'dataloader_worker':
      return trans.__('DataLoader worker');
    case 'mp_pool_worker':
      return trans.__('multiprocessing pool worker');
    case 'mp_process':
      return trans.__('multiprocessing process');
    case 'mp_helper':
      return trans.__('multiprocessing helper');
    case 'torch_distributed_rank':
      return trans.__('torch.distributed rank');
    case 'vllm_engine':
      return trans.__('vLLM engine');
    case 'ray_worker':
      return trans.__('Ray worker');
    case 'raylet':
      return trans.__('Ray raylet');
    case 'ray_node':
      return trans.__('Ray node process');
    case 'dask_worker':
      return trans.__('Dask worker');
    case 'dask_nanny':
      return trans.__('Dask nanny');
    case 'other':
      return trans.__('process');
    default:
      return role;
  }
}
