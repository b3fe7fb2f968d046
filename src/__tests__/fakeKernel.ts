/**
 * Just enough of a kernel, comm and session context to drive
 * KernelHelperConnection through its lifecycle without a server.
 */
import { Signal } from '@lumino/signaling';

export class FakeComm {
  constructor(readonly targetName: string) {}
  readonly commId = `comm-${++FakeComm.count}`;
  static count = 0;
  isDisposed = false;
  closed = false;
  opened: any[] = [];
  sent: any[] = [];
  onMsg: (msg: any) => void = () => undefined;
  onClose: (msg: any) => void = () => undefined;

  open(data: any) {
    this.opened.push(data);
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

  /** The kernel sends `data` on this comm. */
  receive(data: unknown): void {
    this.onMsg({ content: { comm_id: this.commId, data } });
  }

  /** The kernel closes the comm. */
  closeFromKernel(): void {
    this.onClose({ content: { comm_id: this.commId, data: {} } });
  }

  /** The last request the frontend sent. */
  get lastRequest(): any {
    return this.sent[this.sent.length - 1];
  }
}

export type ExecuteOutcome =
  | { status: 'ok' }
  | { status: 'error'; ename: string; evalue: string; traceback: string[] }
  | { status: 'aborted' }
  | 'never'
  | 'reject';

export class FakeKernel {
  constructor(readonly language = 'python') {
    this.info = Promise.resolve({
      language_info: { name: this.language }
    } as any);
  }
  status: string = 'idle';
  info: Promise<any>;
  executed: any[] = [];
  comms: FakeComm[] = [];
  executeOutcome: ExecuteOutcome = { status: 'ok' };

  requestExecute(content: any, disposeOnDone?: boolean) {
    this.executed.push({ content, disposeOnDone });
    const outcome = this.executeOutcome;
    let done: Promise<any>;
    if (outcome === 'never') {
      done = new Promise(() => undefined);
    } else if (outcome === 'reject') {
      done = Promise.reject(new Error('Canceled future for execute_request'));
    } else {
      done = Promise.resolve({ content: { execution_count: null, ...outcome } });
    }
    return { done };
  }

  createComm(targetName: string) {
    const comm = new FakeComm(targetName);
    this.comms.push(comm);
    return comm;
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

  /** The kernel reports a new execution state. */
  setStatus(status: string): void {
    const kernel = this.session?.kernel;
    if (kernel) {
      kernel.status = status;
    }
    this.statusChanged.emit(status);
  }

  changeKernel(kernel: FakeKernel | null): void {
    const old = this.session?.kernel ?? null;
    this.session = kernel ? { kernel } : null;
    this.kernelChanged.emit({ name: 'kernel', oldValue: old, newValue: kernel });
  }
}

/** Let pending promise callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await Promise.resolve();
  }
  await new Promise(resolve => setTimeout(resolve, 0));
}
