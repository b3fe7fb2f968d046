/**
 * Delivering the memory helper into one kernel: steps 1-3 of each run of
 * KernelHelperConnection (see there), which keeps the comm this opens.
 *
 *   1. reads `language_info.name` (only Python kernels get the helper), asking
 *      again when a kernel_info request is lost;
 *   2. executes the helper's bootstrap code (./helperCode.ts) silently (no
 *      history, no Out[], no cell hooks), and
 *   3. opens the comm with the protocol version and the sampling config, in
 *      the same tick as 2 (`sendHelper`): nothing the notebook sends can come
 *      between them, and a notebook cell sent after them runs with the helper
 *      installed. The execute reply comes after: an error there means the
 *      helper could not start (its ename/evalue is shown, and the comm, whose
 *      target was never registered, is dropped).
 *
 * Every step reports its progress or failure as the model's state; a run that
 * `stale()` says was replaced stops without touching the model.
 */
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { describeState } from '../model/MonitorState';
import {
  COMM_TARGET,
  HelperConfig,
  OpenMessage,
  PartialHelperConfig,
  PROTOCOL_VERSION
} from '../protocol/messages';
import { describeFailure, ignoreRejection } from './kernelFailures';
import { SILENT } from './silentExecution';

/** What one bootstrap run needs from the connection it runs for. */
export interface IHelperBootstrapHost {
  model: KernelMemoryModel;
  /** True once a newer run replaced this one (or the connection was disposed). */
  stale: () => boolean;
  loadBootstrapCode: () => Promise<string>;
  /** The sampling config to open the comm with. */
  config: () => HelperConfig | PartialHelperConfig;
  /** The kernel's language, once its info says it. */
  languageKnown?: (language: string) => void;
  /** The kernel runs Python, but not in ipykernel (its info said so). */
  unsupported?: () => void;
  /** The bootstrap went as execute request `msgId` (the kernel's statuses name it). */
  sent?: (msgId: string) => void;
  /** Comms of this frontend the new one replaces (the open's `replaces`); asked once, at the open. */
  replaces?: () => string[];
  /** Take the new comm (wire its messages) before it is opened. */
  adopt: (comm: Kernel.IComm) => void;
  /** The adopted comm could not be opened, or the helper did not start: forget it. */
  abandon: () => void;
  /**
   * The kernel skipped the bootstrap (`aborted`: a cell queued ahead of it
   * failed or was interrupted): close the comm opened with it, and say
   * whether to send both again (false: this run is stale, or it tried enough).
   */
  redeliver?: () => boolean;
  /** This run's helper was sent already (ahead of a cell). */
  delivered?: () => boolean;
  /**
   * Claim the delivery of this run: false when it was delivered already
   * (sent before a notebook cell, while this run was still awaiting).
   */
  claimDelivery: () => boolean;
}

/** The state's sentence while a running cell keeps the kernel from answering. */
export const RUNNING_CELL_DELAYS_TEXT =
  'Waiting for the kernel to answer: a running cell delays it until the cell finishes\u2026';

/**
 * The state's sentence while the kernel is busy only with what this page
 * sent to start the helper (the wake-up of a restarted kernel, or an earlier
 * bootstrap): no cell runs.
 */
export const KERNEL_STARTING_TEXT =
  'Waiting for the kernel to answer: it is still starting\u2026';

/** The state's sentence while the helper is sent again after the kernel skipped it. */
export const SKIPPED_BEHIND_A_CELL_TEXT =
  'A cell queued ahead of the memory helper failed or was interrupted, so the kernel skipped the helper; starting it again\u2026';

/** Python kernels whose `implementation` (kernel info) the helper does not run in. */
export const UNSUPPORTED_PYTHON_KERNELS: ReadonlySet<string> = new Set([
  'xeus-python',
  'pyodide'
]);

/** How long a kernel of unknown status may stay silent before the panel says a cell most likely runs. */
export const UNKNOWN_STATUS_WAIT_MS = 3000;

/** The state's sentence once the kernel has not answered its info request for two minutes. */
export const LATE_KERNEL_TEXT =
  'The kernel has not answered for over 2 minutes: a cell may still be running, ' +
  'or the kernel is stuck. The memory helper starts as soon as it answers.';

/** LATE_KERNEL_TEXT where the kernel was last heard busy starting the helper, with no cell. */
export const LATE_STARTING_KERNEL_TEXT =
  'The kernel has not answered for over 2 minutes: it may still be starting, ' +
  'or it is stuck. The memory helper starts as soon as it answers.';

/**
 * Whether a cell may be what keeps a busy kernel from answering: yes unless
 * the kernel was heard busy with this page's own helper request (statuses
 * name their request; a status heard of no request says nothing).
 */
function cellMayRun(model: KernelMemoryModel): boolean {
  return model.kernelBusyWith !== 'helper';
}

/** Run steps 1-3 for `kernel`; the outcome is in `host.model`'s state. */
export async function bootstrapHelper(
  kernel: Kernel.IKernelConnection,
  host: IHelperBootstrapHost
): Promise<void> {
  const { model, stale } = host;
  if (kernel.status === 'dead') {
    model.setState('disconnected', 'The kernel is dead.');
    return;
  }

  // 1. Only Python kernels get the helper (and make the page fetch its code).
  // The info request waits behind a running cell (a page reloaded meanwhile
  // knows no status until the kernel sends one).
  model.setState(
    'kernel-starting',
    kernel.status === 'busy' ? delaysText(model) : undefined
  );
  // A page knows no status until the kernel sends one: most often within a
  // second; a kernel still silent after UNKNOWN_STATUS_WAIT_MS is most
  // likely running a cell started before this page.
  const silent = setTimeout(() => {
    if (
      !stale() &&
      model.state === 'kernel-starting' &&
      kernel.status === 'unknown'
    ) {
      model.setState('kernel-starting', delaysText(model));
    }
  }, UNKNOWN_STATUS_WAIT_MS);
  void Promise.resolve(kernel.info).then(
    () => clearTimeout(silent),
    () => clearTimeout(silent)
  );
  const info = await step(host, 'could not read the kernel info', () =>
    kernelInfo(kernel, {
      stale,
      busy: () => kernel.status === 'busy' || model.kernelBusy,
      late: () => {
        if (model.state === 'kernel-starting') {
          model.setState(
            'kernel-starting',
            cellMayRun(model) ? LATE_KERNEL_TEXT : LATE_STARTING_KERNEL_TEXT
          );
        }
      }
    })
  );
  if (info === null) {
    return;
  }
  const language = info.language_info?.name ?? '';
  host.languageKnown?.(language);
  if (language.toLowerCase() !== 'python') {
    model.setState(
      'non-python',
      describeState('non-python', language || undefined)
    );
    return;
  }
  // Python, but not ipykernel: the helper needs IPython's shell, ipykernel's
  // comms and threads (xeus-python has neither IPython's events nor the same
  // comm manager; JupyterLite's pyodide kernel has no threads).
  const implementation = String(info.implementation ?? '');
  if (UNSUPPORTED_PYTHON_KERNELS.has(implementation.toLowerCase())) {
    host.unsupported?.();
    model.setState(
      'non-python',
      `This notebook's kernel is ${implementation}: GPU memory monitoring needs ` +
        "ipykernel (IPython's Python kernel)."
    );
    return;
  }

  // 2 and 3. Deliver the helper and open the comm; unless it went already,
  // ahead of a cell, while the info was awaited (the model may be live).
  if (host.delivered?.()) {
    return;
  }
  model.setState('bootstrapping', waitingText(kernel, model));
  const code = await step(host, "could not load the helper's code", () =>
    host.loadBootstrapCode()
  );
  if (code === null || !host.claimDelivery()) {
    return; // failed, or delivered meanwhile, before a notebook cell ran
  }
  await sendHelper(kernel, code, host);
}

/** What keeps a busy kernel from answering its info request. */
function delaysText(model: KernelMemoryModel): string {
  return cellMayRun(model) ? RUNNING_CELL_DELAYS_TEXT : KERNEL_STARTING_TEXT;
}

// After a reconnect the connection knows no status until the kernel sends
// one, which a running cell may delay: the model's busy flag (from the
// status heard before) still says the kernel is busy, and with what.
function waitingText(
  kernel: Kernel.IKernelConnection,
  model: KernelMemoryModel
): string | undefined {
  if (kernel.status !== 'busy' && !model.kernelBusy) {
    return undefined;
  }
  return cellMayRun(model)
    ? 'Waiting for the running cell to finish to start the memory helper\u2026'
    : 'The kernel is still starting; the memory helper starts when it is ready\u2026';
}

/**
 * Steps 2 and 3, sent in this tick (nothing awaited before both are sent);
 * resolves once the execute reply has said how the bootstrap went. `reason`
 * is the state's sentence until the helper answers (default: whether a
 * running cell delays it).
 */
export async function sendHelper(
  kernel: Kernel.IKernelConnection,
  code: string,
  host: IHelperBootstrapHost,
  reason: string | undefined = waitingText(kernel, host.model)
): Promise<void> {
  const { model } = host;
  model.setState('bootstrapping', reason);
  let bootstrap: Kernel.IShellFuture<
    KernelMessage.IExecuteRequestMsg,
    KernelMessage.IExecuteReplyMsg
  >;
  try {
    bootstrap = kernel.requestExecute({ ...SILENT, code }, true);
    host.sent?.(bootstrap.msg.header.msg_id);
  } catch (reason) {
    model.setState(
      'helper-failed',
      describeFailure('the bootstrap request failed', reason)
    );
    return;
  }
  // The helper answers the open with hello, then samples.
  openComm(kernel, host);
  const reply = await step(
    host,
    'the bootstrap request failed',
    () => bootstrap.done
  );
  if (reply === null) {
    return;
  }
  const content = reply.content;
  if (content.status === 'aborted' && host.redeliver?.()) {
    // ipykernel skips the execute requests queued behind a cell that failed
    // (stop_on_error), ours included whatever its own flag says, but not the
    // comm_open: that comm (closed now) reached a helper only if one was
    // there already. The skipping is over once this reply is here.
    await sendHelper(kernel, code, host, SKIPPED_BEHIND_A_CELL_TEXT);
    return;
  }
  if (content.status !== 'ok') {
    // The comm's target was never registered: the kernel closes it.
    host.abandon();
    if (model.state === 'non-python') {
      return; // sent ahead of a cell before the info said no: that says why
    }
    model.setState(
      'helper-failed',
      content.status === 'error'
        ? `${content.ename}: ${content.evalue}`
        : `the kernel did not run the bootstrap (status: ${String(content.status)})`
    );
    return;
  }
  if (model.state === 'bootstrapping') {
    model.setState(
      'bootstrapping',
      'Helper started; waiting for its first message\u2026'
    );
  }
}

function openComm(
  kernel: Kernel.IKernelConnection,
  host: IHelperBootstrapHost
): void {
  const { model } = host;
  let comm: Kernel.IComm;
  try {
    comm = kernel.createComm(COMM_TARGET);
  } catch (reason) {
    model.setState(
      'helper-failed',
      describeFailure('could not create the comm', reason)
    );
    return;
  }
  keepOnMainShell(comm);
  host.adopt(comm);
  const open: OpenMessage = {
    type: 'open',
    protocol: PROTOCOL_VERSION,
    config: host.config()
  };
  const replaces = host.replaces?.() ?? [];
  if (replaces.length) {
    open.replaces = replaces;
  }
  try {
    ignoreRejection(comm.open(open as any).done);
  } catch (reason) {
    host.abandon();
    model.setState(
      'helper-failed',
      describeFailure('could not open the comm', reason)
    );
  }
}

/**
 * Where the kernel supports subshells (ipykernel 7), JupyterLab 4.4 and later
 * send a comm's messages over one ("perCommTarget" by default): handled on
 * another thread while a cell runs, and a close can overtake its own open
 * still queued behind the cell. The helper's requests edit the notebook's
 * namespace and wait for the running cell (docs/protocol.md): its comm stays
 * on the main shell. Set in the tick the comm is made, before the subshell
 * the comm would ask for is requested, and kept: a change of JupyterLab's
 * setting at run time sets it on every open comm of the kernel connection,
 * which this one ignores. Earlier releases have no such setting.
 */
export function keepOnMainShell(comm: Kernel.IComm): void {
  if (!('commsOverSubshells' in comm)) {
    return;
  }
  const disabled = 'disabled' as unknown as Kernel.IComm['commsOverSubshells'];
  comm.commsOverSubshells = disabled;
  Object.defineProperty(comm, 'commsOverSubshells', {
    configurable: true,
    enumerable: true,
    get: () => disabled,
    set: () => undefined
  });
}

/**
 * One awaited step of a run: its value, or null when it failed (said as the
 * model's state, unless the run is stale by then) or the run went stale
 * while it was awaited.
 */
async function step<T>(
  host: Pick<IHelperBootstrapHost, 'model' | 'stale'>,
  failure: string,
  run: () => Promise<T>
): Promise<T | null> {
  let value: T;
  try {
    value = await run();
  } catch (reason) {
    if (!host.stale()) {
      host.model.setState('helper-failed', describeFailure(failure, reason));
    }
    return null;
  }
  return host.stale() ? null : value;
}

const NEVER = new Promise<never>(() => undefined);

/** What kernelInfo needs besides the kernel. */
export interface IKernelInfoWait {
  /** True once the run that asks was replaced: stop asking. */
  stale: () => boolean;
  /**
   * True while the kernel is known to be working through a cell (its status
   * says so, or its helper's samples are heard): the request is queued
   * behind the cell, not lost, and asking again would only queue more.
   */
  busy?: () => boolean;
  /** Called once when no answer came within `lateMs`. */
  late?: () => void;
  /** The first wait before asking again; each later one doubles, up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  lateMs?: number;
}

/**
 * The kernel's info reply. `kernel.info` settles with the first reply; a
 * request can be lost (seen behind a kernel gateway whose websocket to the
 * kernel reconnected as the kernel started), and then it never does: ask
 * again, waiting longer each time, unless the kernel is busy. It never gives
 * up while its run is current: a page opened during a cell of several hours
 * gets its answer when the cell ends (`late` lets the waiting be said).
 */
export async function kernelInfo(
  kernel: Pick<Kernel.IKernelConnection, 'info' | 'requestKernelInfo'>,
  wait: IKernelInfoWait
): Promise<KernelMessage.IInfoReply> {
  const { stale, busy = () => false, late = () => undefined } = wait;
  const maxRetryMs = wait.maxRetryMs ?? 60_000;
  const lateAt = Date.now() + (wait.lateMs ?? 120_000);
  let retryMs = wait.retryMs ?? 10_000;
  let saidLate = false;
  let pending: Promise<KernelMessage.IInfoReply> = kernel.info;
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<null>(resolve => {
      timer = setTimeout(() => resolve(null), retryMs);
    });
    const reply = await Promise.race([pending, waited]);
    clearTimeout(timer);
    if (reply) {
      return reply;
    }
    if (stale()) {
      throw new Error('the kernel changed while its info was awaited');
    }
    if (!saidLate && Date.now() >= lateAt) {
      saidLate = true;
      late();
    }
    if (busy()) {
      continue; // queued behind the cell: the pending request will be answered
    }
    retryMs = Math.min(maxRetryMs, retryMs * 2);
    // A request that fails is left to the next round (a kernel that died
    // or changed makes the run stale meanwhile).
    const asked = kernel.requestKernelInfo().then(
      msg => (msg ? (msg.content as KernelMessage.IInfoReply) : NEVER),
      () => NEVER
    );
    // Whichever answers first. `kernel.info` settles with the first reply
    // to any request (an earlier one may only have been slow), so the race
    // does not grow with each round.
    pending = Promise.race([kernel.info, asked]);
  }
}
