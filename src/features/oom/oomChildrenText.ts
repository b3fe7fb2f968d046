/**
 * What the out-of-memory assistant says when the kernel's own
 * processes hold the memory: a child on the failing card (a vLLM engine, a
 * spawned rank, a pool worker that touched CUDA) or in host RAM (pool or
 * DataLoader workers, a subprocess), which the kernel can get
 * back by releasing the engine that started it or by stopping it; and a
 * DataLoader worker that the system's out-of-memory killer took, explained
 * with the workers' figures and, when their own memory grew while they ran,
 * the copy-on-write growth that forked workers suffer from a dataset held
 * as Python objects. oomChildActions.ts offers the fixes. The text is data
 * from the kernel in places (pids, names), which the view renders as text.
 */
import { ByteUnits, formatBytes } from '../../text/format';
import type { OomDiagnosis, OomProcess } from '../../protocol/oom';
import { trans } from '../../text/translation';
import { roleText } from '../processes/processText';
import { known } from './oomFigure';

/** The children of the kernel among the processes on the failing card, largest first. */
export function kernelChildren(d: OomDiagnosis): OomProcess[] {
  return d.other_processes
    .filter(p => p.child_of_kernel)
    .sort((a, b) => (b.used_bytes ?? 0) - (a.used_bytes ?? 0));
}

/** "vLLM engine pid 4312 (70.0 GiB)". */
function childText(p: OomProcess, units: ByteUnits): string {
  const role = roleText(p.role ?? 'other');
  return known(p.used_bytes)
    ? trans.__('%1 pid %2 (%3)', role, p.pid, formatBytes(p.used_bytes, units))
    : trans.__('%1 pid %2', role, p.pid);
}

/** The sentence of the cause `child_processes`: which of the kernel's processes hold how much, on the card or in host RAM. */
export function childProcessesText(
  d: OomDiagnosis,
  gain: number | null,
  units: ByteUnits
): string {
  const children = kernelChildren(d);
  const named = children
    .slice(0, 5)
    .map(p => childText(p, units))
    .join(', ');
  const amount = known(gain) ? formatBytes(gain, units) : trans.__('memory');
  const where =
    d.kind === 'host' ? trans.__('of host RAM') : trans.__('on this card');
  return named
    ? trans.__(
        "This kernel's own processes hold %1 %2: %3. The kernel started them, so it can get that back: release what started them, or stop them.",
        amount,
        where,
        named
      )
    : trans.__(
        "This kernel's own processes hold %1 %2. The kernel started them, so it can get that back: see the Processes tab.",
        amount,
        where
      );
}

/** The sentence of the cause `dataloader_workers`: the worker the killer took, what the workers held, and why. */
export function dataLoaderWorkersText(
  d: OomDiagnosis,
  units: ByteUnits
): string {
  const w = d.dataloader_workers;
  if (!w) {
    return trans.__(
      'A DataLoader worker was killed, most likely by the out-of-memory killer.'
    );
  }
  const b = (v: number | null) => formatBytes(v, units);
  const pids = w.killed_pids.join(', ');
  const killed = trans._n(
    'DataLoader worker pid %2 was killed by SIGKILL, which is what the out-of-memory killer sends when host RAM runs out.',
    'DataLoader workers pid %2 were killed by SIGKILL, which is what the out-of-memory killer sends when host RAM runs out.',
    w.killed_pids.length,
    pids
  );
  const held = known(w.workers_host_bytes)
    ? ' ' +
      trans._n(
        'Its %1 worker held %2 at its last reading.',
        'Its %1 workers held %2 together at their last readings.',
        w.workers.length,
        b(w.workers_host_bytes)
      )
    : '';
  const growth = w.copy_on_write
    ? ' ' +
      trans.__(
        "Their own memory grew by %1 while they ran: forked workers share the kernel's pages until they read the dataset's Python objects, and reading an object writes its reference count, so each worker ends up with its own copy of every page it read. Fewer, persistent workers, or the dataset held in arrays rather than lists of objects, hold far less.",
        b(w.uss_growth_bytes)
      )
    : ' ' +
      trans.__(
        'Fewer workers, or smaller batches and prefetching, hold less; the rest of the machine may also need the memory.'
      );
  return killed + held + growth;
}
