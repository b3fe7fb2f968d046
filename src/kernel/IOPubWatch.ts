/**
 * Watches the kernel's IOPub channel for what a notebook's connection cannot
 * learn from its own comm. A kernel publishes every comm message and every
 * status change on IOPub, and every frontend connected to the kernel (other
 * tabs, other browsers) receives them. This page needs three things that
 * arrive only that way:
 *
 * - **Samples sent to other frontends' comms.** A page that is opened while
 *   a cell runs (a reload during a training loop, or a new tab the next
 *   morning) cannot open its own comm yet. The kernel reads the bootstrap
 *   code and the comm_open message only when the cell finishes, which may be
 *   hours away, and that is exactly when the figures matter most. The
 *   helper's sampler runs in a thread of its own and sends every sample to
 *   each comm that is still open in the kernel. One of those is the comm of
 *   the page that started the cell, because that page's `pagehide` handler
 *   could not close it for the same reason. The connection shows these
 *   samples until its own comm says hello. The helper sends the same sample
 *   to every comm, so a sample whose time is not later than the last one
 *   heard is a copy and is skipped.
 * - **Which kernel process is speaking.** When another tab restarts the
 *   kernel, this page receives no `restarting` status; only the page that
 *   asked for the restart does. Every message that a kernel process
 *   publishes carries its session id in the header, and ipykernel's Session
 *   gives each process an id of its own. The first helper message from the
 *   new process (the hello to the other page's new comm) therefore tells
 *   this page that the process changed. This matters most to a page whose
 *   own helper is still queued behind a cell of the old process: its
 *   bootstrap and comm_open died with that process, so its own hello will
 *   never come. When the headers carry no session id, a hello from a
 *   different pid than the one this page's comm talks to means the same
 *   thing, once this page's own comm has said hello.
 * - **Records sent on a comm that JupyterLab already disposed.** JupyterLab
 *   disposes every comm of a restarting kernel at once, but the dying
 *   process may still send the record of the cell that the restart
 *   interrupted. That message reaches IOPub but no comm.
 *
 * The watch also tracks whether the kernel is busy or idle, counting only
 * cells (execute requests). JupyterLab's own status also follows other
 * requests, such as a comm message or a subshell that another page creates
 * or deletes as it opens or closes, so it reports "idle" in the middle of a
 * running cell whenever another tab reloads. Each status message names the
 * request it belongs to, so the kernel being busy with the code this page
 * sent to start the helper is told apart from it being busy with a cell
 * (see noteHelperRequest).
 *
 * Only messages that parse as the helper's are passed on, because other
 * comms (widgets, other extensions) carry data of their own.
 */
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import type { HelloMessage } from '../protocol/messages';
import { loadMessageReaders, messageReaders } from '../protocol/messageReaders';
import { SampleMessage } from '../protocol/sample';
import { HelperComm } from './HelperComm';

/** The parts of the connection that the watch uses. */
export interface IIOPubWatchHost {
  model: KernelMemoryModel;
  /** This page's comm to the helper. */
  channel: HelperComm;
  /** True while a restart that this page was told about is under way. */
  restarting(): boolean;
  /** Called when another frontend restarted the kernel, so this page's comm died with the old process. */
  restartedElsewhere(): void;
}

/**
 * How many kernel processes are remembered by session id. The old processes
 * of this page's restarts are remembered so that their late messages are not
 * taken for a new process; the bound keeps the set small.
 */
const MAX_KNOWN_PROCESSES = 16;

/**
 * How many of this page's helper requests are remembered while they wait for
 * their idle status. The bound is needed because a kernel that dies never
 * sends that status.
 */
const MAX_HELPER_REQUESTS = 16;

/**
 * Listens to a kernel's IOPub channel for what the connection learns beyond its
 * own comm.
 */
export class IOPubWatch {
  constructor(host: IIOPubWatchHost) {
    this._host = host;
  }

  /** Starts listening to `kernel`'s IOPub channel and stops listening to any other kernel. */
  listen(kernel: Kernel.IKernelConnection): void {
    if (kernel === this._kernel) {
      return;
    }
    this.stop();
    this._kernel = kernel;
    this._lastSampleTime = -Infinity;
    this._cellRunning = null;
    this._processSessions.clear();
    this._newProcessDue = false;
    kernel.iopubMessage.connect(this._onIOPub, this);
  }

  /**
   * Records that this page sent the execute request `msgId` to start the
   * memory helper (the bootstrap, or the empty request that wakes a
   * restarted kernel). While the kernel is busy with such a request, it is
   * not running a cell.
   */
  noteHelperRequest(msgId: string): void {
    if (this._helperRequests.size >= MAX_HELPER_REQUESTS) {
      this._helperRequests.delete(
        this._helperRequests.values().next().value as string
      );
    }
    this._helperRequests.add(msgId);
  }

  /** Stops listening, because the kernel or the page is going away. */
  stop(): void {
    this._kernel?.iopubMessage.disconnect(this._onIOPub, this);
    this._kernel = null;
  }

  /**
   * Called when the comm in use dies with its kernel process in a restart.
   * The last record of that process may still arrive, but only on IOPub, so
   * the watch remembers the comm's id.
   */
  retire(): void {
    // An automatic restart reports `restarting` and then `autorestarting`,
    // so this runs twice. The second call finds the comm already dropped and
    // keeps the id that the first call saved.
    this._retiredCommId =
      this._host.channel.comm?.commId ?? this._retiredCommId;
    this._newProcessDue = true; // The next process to speak is the restarted one.
    this._lastSampleTime = -Infinity; // The new process's sample times start afresh.
    this._cellRunning = null;
  }

  private _onIOPub(
    _: Kernel.IKernelConnection,
    msg: KernelMessage.IIOPubMessage
  ): void {
    if (KernelMessage.isStatusMsg(msg)) {
      const parent = msg.parent_header as
        { msg_type?: unknown; msg_id?: unknown } | undefined;
      const state = msg.content.execution_state;
      if (
        parent?.msg_type === 'execute_request' &&
        (state === 'busy' || state === 'idle')
      ) {
        const helper =
          typeof parent.msg_id === 'string' &&
          this._helperRequests.has(parent.msg_id);
        if (helper && state === 'idle') {
          this._helperRequests.delete(parent.msg_id as string);
        }
        this._cellRunning = state === 'busy';
        this._host.model.setKernelBusy(
          state === 'busy',
          helper ? 'helper' : 'cell'
        );
      }
      return;
    }
    if (!KernelMessage.isCommMsgMsg(msg)) {
      return;
    }
    const data: unknown = msg.content.data;
    // Look at the type cheaply before parsing, because most comm traffic in
    // a notebook belongs to other comms.
    const type =
      typeof data === 'object' && data !== null
        ? (data as { type?: unknown }).type
        : undefined;
    if (type !== 'cells' && type !== 'sample' && type !== 'hello') {
      return;
    }
    const commId = msg.content.comm_id;
    const own = commId === this._host.channel.comm?.commId;
    this._noteProcess(msg.header.session, own);
    if (own) {
      return; // The comm's own handler deals with this message.
    }
    if (type === 'cells') {
      this._onRecord(commId, data);
      return;
    }
    if (type === 'sample' && this._host.channel.helloSeen) {
      return; // This page's own comm is talking, so copies sent to other pages are not needed.
    }
    const readers = messageReaders();
    if (!readers) {
      // The page's own helper is not delivered yet; copies of another
      // page's messages are of no use until then.
      void loadMessageReaders().catch(() => undefined);
      return;
    }
    const result = readers.parseKernelMessage(data);
    if (result.kind !== 'message') {
      return; // Not the helper's, or a protocol version this page does not speak: ignore it.
    }
    const message = result.message;
    if (message.type === 'hello') {
      this._onHello(message);
    } else if (
      message.type === 'sample' &&
      message.time > this._lastSampleTime
    ) {
      this._lastSampleTime = message.time;
      this._onSample(message);
    }
  }

  /**
   * Notes the session id of the kernel process that sent a helper message;
   * `own` is true when the message came on this page's comm. Only the
   * helper's messages count. The helper runs in Python kernels, which use
   * one session id per process, while other kernels are not known to do so,
   * and the server publishes some statuses under a session of its own. A
   * process stays known once it has been heard, because the old process's
   * last messages may arrive during or after this page's own restart, and
   * they must not be taken for a new process.
   *
   * - A message on this page's own comm comes from the current process,
   *   whoever restarted it: this page, or another client that told it
   *   nothing and whose restart the silence watch detected.
   * - After a restart that this page was told about (`retire()`), the first
   *   unknown process is the one that restart started, whether it is heard
   *   during the restart or after it.
   * - Otherwise, an unknown process that appears after another one was heard
   *   means that another frontend restarted the kernel.
   */
  private _noteProcess(session: unknown, own: boolean): void {
    const known = this._processSessions;
    if (typeof session !== 'string' || session === '') {
      return;
    }
    const isNew = !known.has(session);
    if (isNew) {
      if (known.size >= MAX_KNOWN_PROCESSES) {
        known.delete(known.values().next().value as string); // A Set iterates oldest first.
      }
      known.add(session);
    }
    if (own) {
      this._newProcessDue = false;
      return;
    }
    if (!isNew) {
      return;
    }
    if (this._newProcessDue) {
      this._newProcessDue = false;
    } else if (known.size > 1 && !this._host.restarting()) {
      // That call retires the comm, which expects a new process to speak;
      // the process just added is that one, so nothing more is expected.
      this._host.restartedElsewhere();
      this._newProcessDue = false;
    }
  }

  /**
   * Shows a sample overheard from another page's comm while a cell keeps
   * this page's own comm from opening. That is the case when a cell was
   * heard starting or, if no cell status has been heard since this page
   * began listening (it opened while a cell ran), when the kernel is not
   * known to be idle. Samples are not shown while the kernel restarts,
   * because the old process's last samples may still arrive, nor after a
   * cell has ended, because this page's comm opens next. JupyterLab's status
   * alone cannot decide this, because it reports idle in the middle of a
   * cell whenever another page opens or closes.
   */
  private _onSample(sample: SampleMessage): void {
    const running = this._cellRunning ?? this._kernel?.status !== 'idle';
    if (running && !this._host.restarting()) {
      this._host.model.overhearSample(sample);
    }
  }

  /**
   * Handles a hello sent to another page's comm. A hello from a different
   * process than the one this page's comm talks to means that the kernel was
   * restarted elsewhere.
   */
  private _onHello(hello: HelloMessage): void {
    const own = this._host.model.hello;
    if (!own || !this._host.channel.helloSeen || this._host.restarting()) {
      return;
    }
    if (hello.pid !== own.pid || hello.hostname !== own.hostname) {
      this._host.restartedElsewhere();
    }
    // Otherwise it is another page's comm to the same process, which changes nothing.
  }

  /**
   * Takes the record of the cell that a restart interrupted, sent on the
   * comm that JupyterLab disposed when the restart began. It is taken only
   * until the new process says hello, because until then the model's cells
   * are still the old process's. Records sent to other pages' comms belong
   * to those pages and are ignored.
   */
  private _onRecord(commId: string, data: unknown): void {
    if (commId === this._retiredCommId && this._host.model.hello === null) {
      this._host.model.ingest(data);
    }
  }

  private _host: IIOPubWatchHost;
  private _kernel: Kernel.IKernelConnection | null = null;
  private _lastSampleTime = -Infinity;
  private _retiredCommId: string | null = null;
  /** The session ids of the kernel processes that the helper's messages came from, oldest first. */
  private _processSessions = new Set<string>();
  /** True when a restart that this page was told about has begun and its new process has not spoken yet. */
  private _newProcessDue = false;
  /** Whether a cell is running, according to the last cell status heard; null when none has been heard. */
  private _cellRunning: boolean | null = null;
  /** The msg_ids of the execute requests that this page sent to start the helper. */
  private _helperRequests = new Set<string>();
}
