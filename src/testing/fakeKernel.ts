/**
 * Just enough of a kernel, comm and session context to drive
 * KernelHelperConnection through its lifecycle without a server.
 */
import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';

import { registerCommands } from './registerAllCommands';
import { KernelHelperConnection } from '../kernel/KernelHelperConnection';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { MemoryMonitor } from '../monitor/MemoryMonitor';
import { makeHello, MiB, wire } from './fixtures';
import { CLEANUP_ACTIONS } from '../features/cleanup/cleanupActionsPart';
import { ALLOCATION_RECORDING } from '../features/allocations/allocationRecordingPart';

export class FakeComm {
  constructor(readonly targetName: string) {}
  readonly commId = `comm-${++FakeComm.count}`;
  static count = 0;
  isDisposed = false;
  closed = false;
  opened: any[] = [];
  /**
   * How comms are made. 'perCommTarget' is how JupyterLab 4.4 and later
   * make them: over a subshell per comm target, where the kernel has
   * subshells.
   */
  commsOverSubshells = 'perCommTarget';
  /** The value of `commsOverSubshells` at each open. */
  openedOver: string[] = [];
  sent: any[] = [];
  onMsg: (msg: any) => void = () => undefined;
  onClose: (msg: any) => void = () => undefined;

  open(data: any) {
    this.opened.push(data);
    this.openedOver.push(this.commsOverSubshells);
    return { done: Promise.resolve() };
  }
  send(data: any) {
    this.sent.push(data);
    return { done: Promise.resolve() };
  }
  close() {
    this.closed = true;
    this.onClose({ content: { comm_id: this.commId, data: {} } });
    this.isDisposed = true;
    return { done: Promise.resolve() };
  }
  dispose() {
    this.isDisposed = true;
  }

  /** Makes the kernel send `data` on this comm. */
  receive(data: unknown): void {
    this.onMsg({ content: { comm_id: this.commId, data } });
  }

  /** Makes the kernel close the comm. */
  closeFromKernel(): void {
    this.onClose({ content: { comm_id: this.commId, data: {} } });
  }

  /** The last request the frontend sent. */
  get lastRequest(): any {
    return this.sent[this.sent.length - 1];
  }

  /**
   * Makes the kernel answer `request`, by default the last one, with `result`.
   */
  reply(result: unknown, request: any = this.lastRequest): void {
    this.receive({
      type: 'reply',
      request_id: request.request_id,
      request_type: request.type,
      result: JSON.parse(JSON.stringify(result))
    });
  }

  /**
   * Makes the kernel answer `request`, by default the last one, with an error.
   */
  replyError(
    code: string,
    message: string,
    request: any = this.lastRequest
  ): void {
    this.receive({
      type: 'error',
      request_id: request.request_id,
      code,
      message
    });
  }
}

export type ExecuteOutcome =
  | { status: 'ok'; user_expressions?: { [key: string]: unknown } }
  | { status: 'error'; ename: string; evalue: string; traceback: string[] }
  | { status: 'aborted' }
  | 'never'
  | 'reject'
  | { later: Promise<{ status: string; [key: string]: unknown }> };

/**
 * What ipykernel answers for the request's user expressions when the cell
 * ran: each evaluated (to None here), unless the outcome says otherwise.
 */
function evaluated(
  content: { user_expressions?: { [key: string]: string } },
  outcome: { status: string }
): { user_expressions?: { [key: string]: unknown } } {
  if (outcome.status !== 'ok') {
    return {};
  }
  const expressions = Object.keys(content.user_expressions ?? {});
  return {
    user_expressions: Object.fromEntries(
      expressions.map(key => [
        key,
        { status: 'ok', data: { 'text/plain': 'None' }, metadata: {} }
      ])
    )
  };
}

export class FakeKernel {
  constructor(readonly language = 'python') {
    this.info = Promise.resolve({
      language_info: { name: this.language }
    } as any);
  }
  status: string = 'idle';
  isDisposed = false;
  readonly id = `kernel-${++FakeKernel.count}`;
  static count = 0;
  /** What the kernel publishes on IOPub, which every frontend connected to it hears. */
  iopubMessage = new Signal<this, any>(this);
  /** Emits every message sent or received; RunningCellTracker listens to it. */
  anyMessage = new Signal<this, { msg: any; direction: 'send' | 'recv' }>(this);
  info: Promise<any>;
  executed: any[] = [];
  comms: FakeComm[] = [];
  executeOutcome: ExecuteOutcome = { status: 'ok' };
  /**
   * The `session` in the headers of what the kernel process publishes. There
   * is one per process (ipykernel's Session), so a restart changes it.
   */
  processSession = 'process-1';

  requestExecute(content: any, disposeOnDone?: boolean) {
    const msg = {
      header: {
        msg_id: `execute-${++FakeKernel.requests}`,
        msg_type: 'execute_request'
      }
    };
    // What runs: the helper's bootstrap travels as a user expression of an
    // empty cell; anything else is the cell's code.
    const code =
      content.user_expressions?.jupyterlab_vram_bootstrap ?? content.code;
    this.executed.push({ content, disposeOnDone, msg, code });
    const outcome = this.executeOutcome;
    let done: Promise<any>;
    if (outcome === 'never') {
      done = new Promise(() => undefined);
    } else if (outcome === 'reject') {
      done = Promise.reject(new Error('Canceled future for execute_request'));
    } else if ('later' in outcome) {
      done = outcome.later.then(reply => ({
        content: { execution_count: null, ...reply }
      }));
    } else {
      done = Promise.resolve({
        content: {
          execution_count: null,
          ...evaluated(content, outcome),
          ...outcome
        }
      });
    }
    return { msg, done };
  }

  /** The execute requests sent, kept for their msg_ids. */
  static requests = 0;

  /** How many kernel_info requests were sent. */
  infoRequests = 0;

  /**
   * Answers with `info`. JupyterLab's services settle `kernel.info` with the
   * first reply.
   */
  requestKernelInfo(): Promise<any> {
    this.infoRequests++;
    return this.info.then(content => ({ content }));
  }

  createComm(targetName: string) {
    const comm = new FakeComm(targetName);
    this.comms.push(comm);
    return comm;
  }

  /**
   * Makes the kernel send `data` on comm `commId`, which may be any
   * frontend's, so it is published on IOPub.
   */
  publishCommMsg(commId: string, data: unknown): void {
    this.iopubMessage.emit({
      channel: 'iopub',
      header: { msg_type: 'comm_msg', session: this.processSession },
      content: { comm_id: commId, data }
    });
  }

  /**
   * Makes the kernel publish its execution state while it handles a request
   * of type `parent`. `msgId` names the request, for example
   * `executed[i].msg.header.msg_id`.
   */
  publishStatus(state: string, parent: string, msgId?: string): void {
    this.iopubMessage.emit({
      channel: 'iopub',
      header: { msg_type: 'status', session: this.processSession },
      parent_header:
        msgId === undefined
          ? { msg_type: parent }
          : { msg_type: parent, msg_id: msgId },
      content: { execution_state: state }
    });
  }

  get lastComm(): FakeComm {
    return this.comms[this.comms.length - 1];
  }
}

export class FakeSessionContext {
  constructor(kernel: FakeKernel | null) {
    this.session = kernel ? { kernel } : null;
  }
  session: { kernel: FakeKernel | null } | null;
  isReady = true;
  ready: Promise<void> = Promise.resolve();
  kernelChanged = new Signal<this, any>(this);
  statusChanged = new Signal<this, any>(this);
  connectionStatusChanged = new Signal<this, any>(this);

  /**
   * Makes the kernel report a new execution state. Busy and idle are sent
   * as for a cell, as IOPub's status of an execute request, which every
   * frontend hears.
   */
  setStatus(status: string): void {
    const kernel = this.session?.kernel;
    if (kernel) {
      kernel.status = status;
    }
    this.statusChanged.emit(status);
    if (kernel && (status === 'busy' || status === 'idle')) {
      kernel.publishStatus(status, 'execute_request');
    }
  }

  changeKernel(kernel: FakeKernel | null): void {
    const old = this.session?.kernel ?? null;
    this.session = kernel ? { kernel } : null;
    this.kernelChanged.emit({
      name: 'kernel',
      oldValue: old,
      newValue: kernel
    });
  }

  /**
   * Changes the kernel in the order that JupyterLab's services signal it
   * (SessionConnection.update). The old kernel's connection is disposed
   * first and says 'disconnected' while it is still the session's kernel;
   * then the kernel changes; then the new kernel's websocket says
   * 'connected'.
   */
  changeKernelAsServices(kernel: FakeKernel | null): void {
    const old = this.session?.kernel ?? null;
    if (old) {
      old.isDisposed = true;
      this.connectionStatusChanged.emit('disconnected');
    }
    this.changeKernel(kernel);
    this.connectionStatusChanged.emit('connected');
  }
}

/** A helper connection to `kernel`, or to none, feeding a new model. */
export function connectHelper(
  kernel: FakeKernel | null,
  options: Pick<KernelHelperConnection.IOptions, 'config' | 'requestTimeoutMs'>
) {
  const sessionContext = new FakeSessionContext(kernel);
  const model = new KernelMemoryModel({ historyCapacity: 100 });
  const connection = new KernelHelperConnection({
    sessionContext: sessionContext as any,
    model,
    bootstrapCode: 'BOOTSTRAP',
    ...options
  });
  return { sessionContext, model, connection };
}

/** Lets pending promise callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await Promise.resolve();
  }
  await new Promise(resolve => setTimeout(resolve, 0));
}

/**
 * A MemoryMonitor following one notebook panel whose fake kernel already has
 * a live helper, bootstrapped with its comm open and its hello received.
 * This is the starting point of the command tests. `panelExtras` adds
 * fields to the panel, such as its notebook `content`.
 */
export async function liveMonitorOnFakeKernel<TExtras extends object>(
  panelExtras: TExtras
): Promise<{
  kernel: FakeKernel;
  sessionContext: FakeSessionContext;
  comm: FakeComm;
  panel: {
    sessionContext: any;
    disposed: Signal<any, void>;
    isDisposed: boolean;
  } & TExtras;
  tracker: { currentWidget: any; currentChanged: Signal<any, any> };
  monitor: MemoryMonitor;
}> {
  const kernel = new FakeKernel();
  const sessionContext = new FakeSessionContext(kernel);
  const panel = {
    sessionContext: sessionContext as any,
    disposed: new Signal<any, void>({}),
    isDisposed: false,
    ...panelExtras
  };
  const tracker = {
    currentWidget: panel,
    currentChanged: new Signal<any, any>({})
  };
  const monitor = new MemoryMonitor({
    notebooks: tracker,
    partKinds: [CLEANUP_ACTIONS, ALLOCATION_RECORDING],
    createConnection: (sc, model) =>
      new KernelHelperConnection({
        sessionContext: sc as any,
        model,
        config: () => ({
          interval_s: 1,
          change_threshold_bytes: MiB,
          heartbeat_s: 10
        }),
        bootstrapCode: 'BOOTSTRAP'
      })
  });
  await settle();
  const comm = kernel.lastComm;
  comm.receive(wire(makeHello()));
  return { kernel, sessionContext, comm, panel, tracker, monitor };
}

/**
 * Registers the commands over `monitor` as the command tests drive them:
 * in an app with no shell and no palette, and with notifications recorded
 * in `notes`. `options` adds to or replaces registerCommands' options.
 */
export function registerTestCommands(
  commands: CommandRegistry,
  options: Pick<Parameters<typeof registerCommands>[0], 'monitor' | 'sidebar'> &
    Partial<Parameters<typeof registerCommands>[0]>
): { app: any; notes: [string, string][] } {
  const app = { commands, shell: { activateById: jest.fn() } } as any;
  const notes: [string, string][] = [];
  registerCommands({
    app,
    trans: nullTranslator.load('jupyterlab_vram'),
    palette: null,
    setSetting: async () => undefined,
    currentNotebookPath: () => null,
    notify: (type, message) => notes.push([type, message]),
    ...options
  });
  return { app, notes };
}
