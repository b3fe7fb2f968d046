/**
 * Delivering the memory helper into one kernel: steps 1-3 of each run of
 * KernelHelperConnection (see there), which keeps the comm this opens.
 *
 *   1. reads `language_info.name` (only Python kernels get the helper), asking
 *      again when a kernel_info request is lost;
 *   2. executes the helper's bootstrap code (./helperCode.ts) silently (no
 *      history, no Out[], no cell hooks) and reads the execute reply (an
 *      error there means the helper could not start: its ename/evalue is shown);
 *   3. opens the comm with the protocol version and the sampling config.
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
  /** Comms of this frontend the new one replaces (the open's `replaces`); asked once, at the open. */
  replaces?: () => string[];
  /** Take the new comm (wire its messages) before it is opened. */
  adopt: (comm: Kernel.IComm) => void;
  /** The adopted comm could not be opened: forget it. */
  abandon: () => void;
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
  model.setState('kernel-starting');
  const info = await step(host, 'could not read the kernel info', () =>
    kernelInfo(kernel, stale)
  );
  if (info === null) {
    return;
  }
  const language = info.language_info?.name ?? '';
  if (language.toLowerCase() !== 'python') {
    model.setState(
      'non-python',
      describeState('non-python', language || undefined)
    );
    return;
  }

  // 2. Deliver the helper.
  model.setState(
    'bootstrapping',
    kernel.status === 'busy'
      ? 'Waiting for the running cell to finish to start the memory helper\u2026'
      : undefined
  );
  const code = await step(host, "could not load the helper's code", () =>
    host.loadBootstrapCode()
  );
  if (code === null) {
    return;
  }
  const reply = await step(
    host,
    'the bootstrap request failed',
    () =>
      kernel.requestExecute(
        {
          code,
          silent: true,
          store_history: false,
          allow_stdin: false,
          stop_on_error: false
        },
        true
      ).done
  );
  if (reply === null) {
    return;
  }
  const content = reply.content;
  if (content.status === 'error') {
    model.setState('helper-failed', `${content.ename}: ${content.evalue}`);
    return;
  }
  if (content.status !== 'ok') {
    model.setState(
      'helper-failed',
      `the kernel did not run the bootstrap (status: ${String(content.status)})`
    );
    return;
  }

  // 3. Open the comm; the helper answers with hello, then samples.
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
  model.setState(
    'bootstrapping',
    'Helper started; waiting for its first message\u2026'
  );
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
