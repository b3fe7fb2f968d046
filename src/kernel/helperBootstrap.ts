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
} from '../protocol';
import { describeFailure, ignoreRejection } from './kernelFailures';

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
  /** Comms of this frontend the new one replaces (the open's `replaces`); asked once, at the open. */
  replaces?: () => string[];
  /** Take the new comm (wire its messages) before it is opened. */
  adopt: (comm: Kernel.IComm) => void;
  /** The adopted comm could not be opened, or the helper did not start: forget it. */
  abandon: () => void;
  /**
   * Claim the delivery of this run: false when it was delivered already
   * (sent before a notebook cell, while this run was still awaiting).
   */
  claimDelivery: () => boolean;
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
    kernel.status === 'busy' || kernel.status === 'unknown'
      ? 'Waiting for the kernel to answer: a running cell delays it until the cell finishes\u2026'
      : undefined
  );
  const info = await step(host, 'could not read the kernel info', () =>
    kernelInfo(kernel, stale)
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

  // 2 and 3. Deliver the helper and open the comm.
  model.setState('bootstrapping', waitingText(kernel));
  const code = await step(host, "could not load the helper's code", () =>
    host.loadBootstrapCode()
  );
  if (code === null || !host.claimDelivery()) {
    return; // failed, or delivered meanwhile, before a notebook cell ran
  }
  await sendHelper(kernel, code, host);
}

function waitingText(kernel: Kernel.IKernelConnection): string | undefined {
  return kernel.status === 'busy'
    ? 'Waiting for the running cell to finish to start the memory helper\u2026'
    : undefined;
}

/**
 * Steps 2 and 3, sent in this tick (nothing awaited before both are sent);
 * resolves once the execute reply has said how the bootstrap went.
 */
export async function sendHelper(
  kernel: Kernel.IKernelConnection,
  code: string,
  host: IHelperBootstrapHost
): Promise<void> {
  const { model } = host;
  model.setState('bootstrapping', waitingText(kernel));
  let bootstrap: Kernel.IShellFuture<
    KernelMessage.IExecuteRequestMsg,
    KernelMessage.IExecuteReplyMsg
  >;
  try {
    bootstrap = kernel.requestExecute(
      {
        code,
        silent: true,
        store_history: false,
        allow_stdin: false,
        stop_on_error: false
      },
      true
    );
  } catch (reason) {
    model.setState(
      'helper-failed',
      describeFailure('the bootstrap request failed', reason)
    );
    return;
  }
  // The helper answers the open with hello, then samples.
  openComm(kernel, host);
  const reply = await step(host, 'the bootstrap request failed', () =>
    bootstrap.done
  );
  if (reply === null) {
    return;
  }
  const content = reply.content;
  if (content.status !== 'ok') {
    // The comm's target was never registered: the kernel closes it.
    host.abandon();
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

/**
 * The kernel's info reply. `kernel.info` settles with the first reply; a
 * request can be lost (seen behind a kernel gateway whose websocket to the
 * kernel reconnected as the kernel started), and then it never does: ask
 * again every `retryMs`, up to `limitMs`.
 */
export async function kernelInfo(
  kernel: Pick<Kernel.IKernelConnection, 'info' | 'requestKernelInfo'>,
  stale: () => boolean,
  retryMs = 10_000,
  limitMs = 120_000
): Promise<KernelMessage.IInfoReply> {
  const deadline = Date.now() + limitMs;
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
    if (Date.now() >= deadline) {
      throw new Error(`no kernel info reply within ${Math.round(limitMs / 1000)} s`);
    }
    pending = kernel.requestKernelInfo().then(msg => {
      if (!msg) {
        throw new Error('the kernel info request got no reply');
      }
      return msg.content as KernelMessage.IInfoReply;
    });
    pending.catch(() => undefined); // a later round may still succeed
  }
}
