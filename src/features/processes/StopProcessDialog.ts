/**
 * The question before a process is stopped: which process (role, pid,
 * command), what it holds, and what Stop does (SIGTERM, then SIGKILL after
 * a timeout; only that process). Cancel is the default button. The command
 * line is kernel text: it goes in as text.
 */
import type { ByteUnits } from '../../text/format';
import { confirmSentences } from '../../ui/confirmDialog';
import { trans } from '../../text/translation';
import type { TreeProcess } from '../../protocol/processes';
import {
  gpuMemoryText,
  hostMemoryText,
  originText,
  roleText
} from './processText';
import type { ProcessOrigin } from './processOrigin';

/** What the dialog names. */
export interface StopProcessRequest {
  process: TreeProcess;
  origin: ProcessOrigin | null;
  /** Seconds between SIGTERM and SIGKILL. */
  timeoutS: number;
  units: ByteUnits;
}

/** The dialog's sentences, one paragraph each (for the dialog and its tests). */
export function stopProcessSentences(request: StopProcessRequest): string[] {
  const { process, units } = request;
  const gpus = gpuMemoryText(process.gpus, units);
  return [
    trans.__(
      '%1, pid %2, started by %3.',
      roleText(process.role),
      process.pid,
      originText(request.origin)
    ),
    trans.__('Command: %1', process.command || process.name),
    gpus
      ? trans.__(
          'It holds %1 of RAM and %2.',
          hostMemoryText(process.host, units),
          gpus
        )
      : trans.__('It holds %1 of RAM.', hostMemoryText(process.host, units)),
    trans.__(
      'Stop sends it SIGTERM, then SIGKILL if it has not ended after %1 s. Only this process is signalled, not its own children; whatever in the notebook uses it (a DataLoader, a pool, an engine) may fail or start another.',
      request.timeoutS
    )
  ];
}

/** Asks whether to stop the process; true when the user confirms. */
export function confirmStopProcess(
  request: StopProcessRequest
): Promise<boolean> {
  return confirmSentences({
    title: trans.__('Stop a process of the kernel?'),
    role: 'stop-process-dialog',
    sentences: stopProcessSentences(request),
    accept: trans.__('Stop Process'),
    acceptAriaLabel: trans.__('Stop process %1', request.process.pid)
  });
}
