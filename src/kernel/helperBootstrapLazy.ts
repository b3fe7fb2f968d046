/**
 * Delivers the memory helper into one kernel. This is steps 1 to 3 of each
 * run of KernelHelperConnection (described there), which keeps the comm that
 * this code opens.
 *
 *   1. It reads `language_info.name`, because only Python kernels get the
 *      helper, and asks again when a kernel_info request is lost.
 *   2. It executes the helper's bootstrap code (./helperCode.ts) silently,
 *      so that it leaves no history, no Out[] and no cell hooks, as the one
 *      user expression of an empty cell (BOOTSTRAP_EXPRESSION says why).
 *   3. It opens the comm with the protocol version and the sampling config
 *      in the same tick as step 2 (`sendHelper`). Nothing the notebook sends
 *      can come between the two, so a notebook cell sent after them runs
 *      with the helper installed. The execute reply comes afterwards; an
 *      error in it or in its user expression means that the helper could
 *      not start. Its ename and evalue are then shown, and the comm, whose
 *      target was never registered, is dropped.
 *
 * Every step reports its progress or failure as the model's state. A run
 * that `stale()` reports as replaced stops without touching the model.
 */
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { describeState } from '../model/MonitorState';
import { COMM_TARGET, PROTOCOL_VERSION } from '../protocol/commConstants';
import type {
  HelperConfig,
  OpenMessage,
  PartialHelperConfig
} from '../protocol/messages';
import { describeFailure, ignoreRejection } from './kernelFailures';
import { SILENT } from './silentExecution';

/**
 * The key of the user expression that runs the bootstrap. The bootstrap is
 * one Python expression, and it travels as the user expression of an empty
 * silent cell rather than as the cell's source: IPython passes a cell's
 * source through its input transformers several times, which for the
 * bootstrap's 130 kB line of base64 took about 110 ms of the kernel's time
 * on a two-core machine, while a user expression is evaluated as it is. Its
 * failure comes back in the reply, never as a traceback in the notebook.
 * tests/kernel_harness.py sends it the same way.
 */
export const BOOTSTRAP_EXPRESSION = 'jupyterlab_vram_bootstrap';

/** The parts of the connection that one bootstrap run uses. */
export interface IHelperBootstrapHost {
  model: KernelMemoryModel;
  /** True once a newer run has replaced this one, or the connection was disposed. */
  stale: () => boolean;
  loadBootstrapCode: () => Promise<string>;
  /** The sampling config to open the comm with. */
  config: () => HelperConfig | PartialHelperConfig;
  /** Called with the kernel's language once its info names it. */
  languageKnown?: (language: string) => void;
  /** Called when the kernel info says the kernel runs Python, but not in ipykernel. */
  unsupported?: () => void;
  /** Called when the bootstrap went out as the execute request `msgId`, which the kernel's statuses name. */
  sent?: (msgId: string) => void;
  /** Returns the comms of this frontend that the new comm replaces (the open's `replaces`); called once, at the open. */
  replaces?: () => string[];
  /** Takes the new comm and wires up its messages before it is opened. */
  adopt: (comm: Kernel.IComm) => void;
  /** Forgets the adopted comm, because it could not be opened or the helper did not start. */
  abandon: () => void;
  /**
   * Called when the kernel skipped the bootstrap (status `aborted`, because
   * a cell queued ahead of it failed or was interrupted). It closes the comm
   * opened with the bootstrap and says whether to send both again; it
   * returns false when this run is stale or has already tried enough times.
   */
  redeliver?: () => boolean;
  /** True when this run's helper was already sent, ahead of a cell. */
  delivered?: () => boolean;
  /**
   * Claims the delivery for this run. Returns false when the helper was
   * already delivered, because it was sent before a notebook cell while this
   * run was still waiting.
   */
  claimDelivery: () => boolean;
}

/** The state's sentence while a running cell keeps the kernel from answering. */
export const RUNNING_CELL_DELAYS_TEXT =
  'Waiting for the kernel to answer: a running cell delays it until the cell finishes\u2026';

/**
 * The state's sentence while the kernel is busy only with what this page
 * sent to start the helper (the wake-up of a restarted kernel, or an earlier
 * bootstrap), so that no cell is running.
 */
export const KERNEL_STARTING_TEXT =
  'Waiting for the kernel to answer: it is still starting\u2026';

/** The state's sentence while the helper is sent again after the kernel skipped it. */
export const SKIPPED_BEHIND_A_CELL_TEXT =
  'A cell queued ahead of the memory helper failed or was interrupted, so the kernel skipped the helper; starting it again\u2026';

/** The Python kernels, by the `implementation` in their kernel info, that the helper cannot run in. */
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

/** The variant of LATE_KERNEL_TEXT for a kernel that was last heard busy starting the helper, with no cell running. */
export const LATE_STARTING_KERNEL_TEXT =
  'The kernel has not answered for over 2 minutes: it may still be starting, ' +
  'or it is stuck. The memory helper starts as soon as it answers.';

/**
 * Whether a cell may be what keeps a busy kernel from answering. It may be,
 * unless the kernel was heard busy with this page's own helper request.
 * Statuses name their request, and a status that names no request tells
 * nothing either way.
 */
function cellMayRun(model: KernelMemoryModel): boolean {
  return model.kernelBusyWith !== 'helper';
}

/** Runs steps 1 to 3 for `kernel`; the outcome is reported in `host.model`'s state. */
export async function bootstrapHelper(
  kernel: Kernel.IKernelConnection,
  host: IHelperBootstrapHost
): Promise<void> {
  const { model, stale } = host;
  if (kernel.status === 'dead') {
    model.setState('disconnected', 'The kernel is dead.');
    return;
  }

  // 1. Only Python kernels get the helper, and only they make the page fetch
  // its code. The info request waits behind a running cell, and a page that
  // was reloaded meanwhile knows no status until the kernel sends one.
  model.setState(
    'kernel-starting',
    kernel.status === 'busy' ? delaysText(model) : undefined
  );
  // A page knows no status until the kernel sends one, which most often
  // happens within a second. A kernel that is still silent after
  // UNKNOWN_STATUS_WAIT_MS is most likely running a cell that was started
  // before this page opened.
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
  // The kernel runs Python, but not in ipykernel. The helper needs IPython's
  // shell and ipykernel's comms and threads: xeus-python has neither
  // IPython's events nor the same comm manager, and JupyterLite's Pyodide
  // kernel has no threads.
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

  // 2 and 3. Deliver the helper and open the comm, unless the helper was
  // already sent ahead of a cell while the info was awaited, in which case
  // the model may already be live.
  if (host.delivered?.()) {
    return;
  }
  model.setState('bootstrapping', waitingText(kernel, model));
  const code = await step(host, "could not load the helper's code", () =>
    host.loadBootstrapCode()
  );
  if (code === null || !host.claimDelivery()) {
    return; // Loading failed, or the helper was delivered meanwhile, ahead of a notebook cell.
  }
  await sendHelper(kernel, code, host);
}

/** What keeps a busy kernel from answering its info request. */
function delaysText(model: KernelMemoryModel): string {
  return cellMayRun(model) ? RUNNING_CELL_DELAYS_TEXT : KERNEL_STARTING_TEXT;
}

// After a reconnect, the connection knows no status until the kernel sends
// one, which a running cell may delay. The model's busy flag, set from the
// status heard before, still says whether the kernel is busy and with what,
// so it is consulted too.
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
 * Sends steps 2 and 3 in this tick, awaiting nothing before both are sent,
 * and resolves once the execute reply has said how the bootstrap went.
 * `reason` is the state's sentence until the helper answers; by default it
 * says whether a running cell delays the helper.
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
    bootstrap = kernel.requestExecute(
      {
        ...SILENT,
        code: '',
        user_expressions: { [BOOTSTRAP_EXPRESSION]: code }
      },
      true
    );
    host.sent?.(bootstrap.msg.header.msg_id);
  } catch (reason) {
    model.setState(
      'helper-failed',
      describeFailure('the bootstrap request failed', reason)
    );
    return;
  }
  // The helper answers the open with a hello, and then sends samples.
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
    // (stop_on_error), including ours whatever its own flag says, but it
    // does not skip the comm_open. That comm, now closed, reached a helper
    // only if one was already in the kernel. The skipping is over once this
    // reply has arrived, so sending again now works.
    await sendHelper(kernel, code, host, SKIPPED_BEHIND_A_CELL_TEXT);
    return;
  }
  const failure = bootstrapFailure(content);
  if (failure !== null) {
    // The comm's target was never registered, so the kernel closes the comm.
    host.abandon();
    if (model.state === 'non-python') {
      return; // It was sent ahead of a cell before the info said no; that state already explains why.
    }
    model.setState('helper-failed', failure);
    return;
  }
  if (model.state === 'bootstrapping') {
    model.setState(
      'bootstrapping',
      'Helper started; waiting for its first message\u2026'
    );
  }
}

/**
 * Why the bootstrap failed, from its execute reply, or null when it ran:
 * the reply's own error (the empty cell did not run), or the error of its
 * user expression (the bootstrap raised).
 */
export function bootstrapFailure(
  content: KernelMessage.IExecuteReplyMsg['content']
): string | null {
  if (content.status === 'error') {
    return `${content.ename}: ${content.evalue}`;
  }
  if (content.status !== 'ok') {
    return `the kernel did not run the bootstrap (status: ${String(content.status)})`;
  }
  const evaluated = content.user_expressions?.[BOOTSTRAP_EXPRESSION] as
    { status?: unknown; ename?: unknown; evalue?: unknown } | undefined;
  if (!evaluated || typeof evaluated !== 'object') {
    return 'the kernel did not evaluate the bootstrap (no user expression in its reply)';
  }
  if (evaluated.status !== 'ok') {
    return `${String(evaluated.ename ?? 'Error')}: ${String(evaluated.evalue ?? '')}`;
  }
  return null;
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
 * Keeps the helper's comm on the kernel's main shell. Where the kernel
 * supports subshells (ipykernel 7), JupyterLab 4.4 and later send a comm's
 * messages over a subshell ("perCommTarget" by default). Those messages are
 * handled on another thread while a cell runs, and a close can overtake its
 * own open that is still queued behind the cell. The helper's requests edit
 * the notebook's namespace and must wait for the running cell
 * (docs/protocol.md), so its comm stays on the main shell. The setting is
 * made in the tick in which the comm is created, before the comm would
 * request its subshell, and it is pinned: when JupyterLab's setting changes
 * at run time, it is applied to every open comm of the kernel connection,
 * and this comm ignores it. Earlier JupyterLab releases have no such
 * setting, and then this does nothing.
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
 * Awaits one step of a run. Returns the step's value, or null when the step
 * failed (which is reported as the model's state unless the run is stale by
 * then) or when the run went stale while the step was awaited.
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
  /** True once the run that asks was replaced, so that asking stops. */
  stale: () => boolean;
  /**
   * True while the kernel is known to be working through a cell (its status
   * says so, or its helper's samples are heard). The request is then queued
   * behind the cell rather than lost, and asking again would only queue
   * more requests.
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
 * Resolves with the kernel's info reply. `kernel.info` settles with the
 * first reply, but a request can be lost (this happens behind a kernel
 * gateway whose websocket to the kernel reconnected as the kernel started),
 * and then it never settles. So the request is sent again, waiting longer
 * each time, unless the kernel is busy. It never gives up while its run is
 * current, because a page opened during a cell of several hours gets its
 * answer only when the cell ends; `late` lets the panel say that it is
 * still waiting.
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
      continue; // The request is queued behind the cell and will be answered.
    }
    retryMs = Math.min(maxRetryMs, retryMs * 2);
    // A request that fails is left to the next round, because a kernel that
    // died or changed makes the run stale meanwhile.
    const asked = kernel.requestKernelInfo().then(
      msg => (msg ? (msg.content as KernelMessage.IInfoReply) : NEVER),
      () => NEVER
    );
    // Take whichever answers first. `kernel.info` settles with the first
    // reply to any request (an earlier one may only have been slow), so the
    // race does not grow with each round.
    pending = Promise.race([kernel.info, asked]);
  }
}
