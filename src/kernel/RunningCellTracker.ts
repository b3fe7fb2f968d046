/**
 * Works out which cell the kernel is running right now. The answer is read
 * off the kernel's own messages, so that it is known at the moment the
 * kernel dies, when the helper's record for that cell never comes:
 *
 * - an outgoing `execute_request` carries the cell's id in its metadata
 *   (`cellId`, as JupyterLab's notebook sends it), and the tracker keeps it
 *   under the request's msg_id;
 * - an `execute_input` on IOPub says that the kernel started that request,
 *   with the execution count it gave it;
 * - a `status: idle` for that request, or its `execute_reply`, says that it
 *   ended.
 *
 * A cell sent by another page (another tab or another browser) has no
 * request here. Its execute_input, which every page hears, carries the code,
 * so the tracker names the notebook cell with exactly that source, provided
 * only one cell has it. It names none when this page sent the code from a
 * console or another notebook.
 *
 * A message from a different kernel process than the last one (the
 * `session` in its header changes, after a restart made from another tab
 * that this page did not see) means that the old process, and whatever it
 * ran, is gone. Status messages are not used for this, because the server
 * sends some of them under its own session.
 *
 * Queued requests are not running; only the one whose execute_input came
 * is. A kernel that dies at once (`os._exit`, a segfault) may die before its
 * execute_input leaves it. When no execute_input came, the oldest request
 * not yet answered is the one the kernel had reached, and it is named as
 * unconfirmed.
 */
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { RunningCell } from '../model/kernelDeath';

/** The most requests remembered, so that a runaway queue cannot grow memory without bound. */
const MAX_PENDING = 1000;

/**
 * Works out from the kernel's own messages which cell the kernel is running.
 */
export class RunningCellTracker {
  /**
   * `now` reads this browser's clock in Unix seconds; tests pass their own.
   * `cellIdOfCode` returns the id of the one notebook cell whose source is
   * `code`. It returns null when no cell or several cells have that source,
   * or when `client`, the kernel client that sent the code, is another one
   * of this page's, because a console or another notebook on the same kernel
   * may run code that a cell also holds.
   */
  constructor(
    now: () => number = () => Date.now() / 1000,
    cellIdOfCode: (code: string, client: string | null) => string | null = () =>
      null
  ) {
    this._now = now;
    this._cellIdOfCode = cellIdOfCode;
  }

  /** The cell that the kernel runs now, or most likely runs; null when it is idle or the cell is unknown. */
  get running(): RunningCell | null {
    const running = this._running;
    if (running) {
      if (running.cellId === null && this._runningCode !== null) {
        // Another page sent this cell. It is looked up in the notebook only
        // when asked (at a death), not every time another page runs a cell,
        // because the lookup compares sources.
        running.cellId = this._cellIdOfCode(
          this._runningCode,
          this._runningClient
        );
        this._runningCode = null;
      }
      return running;
    }
    const oldest = this._pending.values().next();
    return oldest.done || oldest.value.cellId === null
      ? null
      : {
          cellId: oldest.value.cellId,
          executionCount: null,
          confirmed: false,
          startedAt: oldest.value.sentAt
        };
  }

  /** Follows `kernel`'s messages instead of the previous kernel's. */
  attach(kernel: Kernel.IKernelConnection | null): void {
    if (kernel === this._kernel) {
      return;
    }
    this._kernel?.anyMessage.disconnect(this._onMessage, this);
    this._kernel = kernel;
    this.reset();
    this._kernelSession = null;
    kernel?.anyMessage.connect(this._onMessage, this);
  }

  /** Forgets what ran, for a restart: the new process runs nothing yet. */
  reset(): void {
    this._pending.clear();
    this._runningCode = null;
    this._runningClient = null;
    this._running = null;
    this._runningMsgId = null;
  }

  dispose(): void {
    this.attach(null);
  }

  /** Applies one message to the state; public so that tests can feed messages directly. */
  handle(msg: KernelMessage.IMessage, direction: 'send' | 'recv'): void {
    const type = msg.header.msg_type;
    if (direction === 'send') {
      if (type === 'execute_request') {
        const cellId = (msg.metadata as { cellId?: unknown } | undefined)
          ?.cellId;
        if (this._pending.size >= MAX_PENDING) {
          const oldest = this._pending.keys().next().value;
          if (oldest !== undefined) {
            this._pending.delete(oldest);
          }
        }
        this._pending.set(msg.header.msg_id, {
          cellId: typeof cellId === 'string' ? cellId : null,
          sentAt: this._now()
        });
      }
      return;
    }
    // Status messages are skipped here, because the server sends some of
    // its own (an automatic restart's `restarting`) under its own session,
    // and the death they announce must still name the cell that the process
    // ran.
    const session = msg.header.session;
    if (session && type !== 'status') {
      if (this._kernelSession !== null && session !== this._kernelSession) {
        this.reset(); // Another process speaks, so the old one runs nothing any more.
      }
      this._kernelSession = session;
    }
    const parent = msg.parent_header as
      { msg_id?: string; session?: unknown } | undefined;
    const parentId = parent?.msg_id;
    if (!parentId) {
      return;
    }
    if (type === 'execute_input') {
      const { execution_count: count, code } = msg.content as {
        execution_count?: unknown;
        code?: unknown;
      };
      const sent = this._pending.get(parentId);
      this._runningMsgId = parentId;
      this._runningCode = !sent && typeof code === 'string' ? code : null;
      this._runningClient =
        typeof parent?.session === 'string' ? parent.session : null;
      this._running = {
        cellId: sent ? sent.cellId : null,
        executionCount:
          typeof count === 'number' && Number.isInteger(count) ? count : null,
        confirmed: true,
        startedAt: this._now()
      };
      return;
    }
    const ended =
      type === 'execute_reply' ||
      (type === 'status' &&
        (msg.content as { execution_state?: unknown }).execution_state ===
          'idle');
    if (ended) {
      this._pending.delete(parentId);
      if (parentId === this._runningMsgId) {
        this._running = null;
        this._runningMsgId = null;
      }
    }
  }

  private _onMessage(
    _: Kernel.IKernelConnection,
    args: Kernel.IAnyMessageArgs
  ): void {
    this.handle(args.msg, args.direction);
  }

  private _now: () => number;
  private _cellIdOfCode: (code: string, client: string | null) => string | null;
  private _kernel: Kernel.IKernelConnection | null = null;
  /** The requests sent and not yet answered, with the cell each came from and when it was sent. */
  private _pending = new Map<
    string,
    { cellId: string | null; sentAt: number }
  >();
  private _running: RunningCell | null = null;
  /** The code of the running cell when another page sent it and its cell has not been looked up yet. */
  private _runningCode: string | null = null;
  /** The kernel client (identified by its `session`) that sent the running cell. */
  private _runningClient: string | null = null;
  private _runningMsgId: string | null = null;
  /** The `session` of the kernel process whose messages came last. */
  private _kernelSession: string | null = null;
}
