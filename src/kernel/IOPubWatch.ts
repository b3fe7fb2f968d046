/**
 * What a notebook's connection learns from the kernel's IOPub beyond its own
 * comm. A kernel publishes every comm message, and every status, on IOPub,
 * which every frontend connected to the kernel receives (other tabs, other
 * browsers). Three things this page needs come only that way:
 *
 * - **Samples sent to other frontends' comms.** A page opened while a cell
 *   runs (a reload during a training loop, a new tab the next morning)
 *   cannot open its comm: the kernel reads the bootstrap and the comm_open
 *   only when the cell finishes, which may be hours away, and that is when
 *   the figures matter most. The helper's sampler runs in a thread of its
 *   own and sends every sample to each comm still open in the kernel (the
 *   comm of the page that started the cell, which its `pagehide` could not
 *   close for the same reason); the connection shows those until its own
 *   comm says hello. The helper sends the same sample to every comm, so a
 *   sample whose time is not after the last one heard is a copy: skipped.
 * - **Which kernel process speaks.** A restart from another tab gives this
 *   page no `restarting` status (only the restarting page knows). Every
 *   message a kernel process publishes carries its session id in the header
 *   (one per process: ipykernel's Session), so the helper's first message
 *   from the new process (the hello to that page's new comm) says the
 *   process changed, also to a page whose own helper is still queued behind
 *   a cell of the old process (its bootstrap and comm_open went with that
 *   process, and no hello of its own will ever come). Where the headers
 *   carry no session, a hello from another pid than this page's comm speaks
 *   to says the same, once this page's own comm said hello.
 * - **Records on a comm JupyterLab already disposed.** JupyterLab disposes
 *   every comm of a restarting kernel at once, while the dying process may
 *   still send the record of the cell the restart interrupted; its message
 *   reaches IOPub, not the comm.
 *
 * And the kernel's busy/idle, counted only for cells (execute requests):
 * JupyterLab's own status also follows other requests (a comm message, a
 * subshell another page creates or deletes as it opens or goes), so it
 * says "idle" in the middle of a running cell when another tab reloads.
 * A status names its request: busy with the code this page sent to start
 * the helper is told apart from busy with a cell (noteHelperRequest).
 *
 * Only messages that parse as the helper's are passed on; other comms
 * (widgets, other extensions) carry other data.
 */
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { HelloMessage, parseKernelMessage } from '../protocol/messages';
import { SampleMessage } from '../protocol/sample';
import { HelperComm } from './HelperComm';

/** What the watch needs of the connection it works for. */
export interface IIOPubWatchHost {
  model: KernelMemoryModel;
  /** This page's comm to the helper. */
  channel: HelperComm;
  /** True while a restart this page heard of is under way. */
  restarting(): boolean;
  /** Another frontend restarted the kernel: this page's comm went with the old process. */
  restartedElsewhere(): void;
}

/** Processes remembered by session id: the old ones of a page's restarts. */
const MAX_KNOWN_PROCESSES = 16;

/** This page's helper requests remembered until their idle (a dead kernel sends none). */
const MAX_HELPER_REQUESTS = 16;

/**
 * Listens to a kernel's IOPub channel for what the connection learns beyond its
 * own comm.
 */
export class IOPubWatch {
  constructor(host: IIOPubWatchHost) {
    this._host = host;
  }

  /** Listen to `kernel`'s IOPub (and stop listening to any other). */
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
   * This page sent the execute request `msgId` to start the memory helper
   * (its bootstrap, or the empty request that wakes a restarted kernel): the
   * kernel busy with it runs no cell.
   */
  noteHelperRequest(msgId: string): void {
    if (this._helperRequests.size >= MAX_HELPER_REQUESTS) {
      this._helperRequests.delete(
        this._helperRequests.values().next().value as string
      );
    }
    this._helperRequests.add(msgId);
  }

  /** Stop listening (the kernel went, or the page does). */
  stop(): void {
    this._kernel?.iopubMessage.disconnect(this._onIOPub, this);
    this._kernel = null;
  }

  /**
   * The comm in use goes with the kernel process (a restart): its last
   * record may still come, on IOPub only.
   */
  retire(): void {
    // One restart says `restarting` then `autorestarting`: the second finds
    // the comm already dropped, and keeps the id the first retired.
    this._retiredCommId =
      this._host.channel.comm?.commId ?? this._retiredCommId;
    this._newProcessDue = true; // the next process to speak is the restarted one
    this._lastSampleTime = -Infinity; // the next process's samples start anew
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
    // Cheap first look: most comm traffic in a notebook is not ours.
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
      return; // the comm's own handler has it
    }
    if (type === 'cells') {
      this._onRecord(commId, data);
      return;
    }
    if (type === 'sample' && this._host.channel.helloSeen) {
      return; // this page's own comm speaks: other pages' copies are not needed
    }
    const result = parseKernelMessage(data);
    if (result.kind !== 'message') {
      return; // not the helper's (or not a protocol this page speaks): none of its business
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
   * The session id of the process that sent a helper message (`own`: on
   * this page's comm). Only the helper's messages count: it runs in Python
   * kernels, whose session id is one per process, while other kernels' are
   * not known to be (and the server publishes statuses of its own, under
   * its own session). Processes heard once stay known: the old process's
   * last messages, which may come while this page's own restart is under
   * way or after, are no new process.
   *
   * - This page's own comm speaks for the process it lives in: the current
   *   one, whatever restarted it (this page, or a client that told it
   *   nothing, whose restart the silence watch found).
   * - After a restart this page heard of (`retire()`), the first unknown
   *   process is the one it started, heard during the restart or after.
   * - Otherwise an unknown process, once another was heard, means another
   *   frontend restarted the kernel.
   */
  private _noteProcess(session: unknown, own: boolean): void {
    const known = this._processSessions;
    if (typeof session !== 'string' || session === '') {
      return;
    }
    const isNew = !known.has(session);
    if (isNew) {
      if (known.size >= MAX_KNOWN_PROCESSES) {
        known.delete(known.values().next().value as string); // the oldest
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
      this._host.restartedElsewhere(); // retire() makes the process just added the expected one
      this._newProcessDue = false;
    }
  }

  /**
   * Shown until this page's own comm speaks, while a cell delays it: a cell
   * was heard starting, or, with none heard since this page listened (it
   * opened mid-cell), the kernel is not known to be idle. Not while the
   * kernel restarts (the old process's last samples may still come), nor
   * once a cell ended (the comm opens next). JupyterLab's status alone is
   * no guide: it says idle mid-cell when another page opens or goes.
   */
  private _onSample(sample: SampleMessage): void {
    const running = this._cellRunning ?? this._kernel?.status !== 'idle';
    if (running && !this._host.restarting()) {
      this._host.model.overhearSample(sample);
    }
  }

  /** From another process than the one this page's comm speaks to: the kernel was restarted elsewhere. */
  private _onHello(hello: HelloMessage): void {
    const own = this._host.model.hello;
    if (!own || !this._host.channel.helloSeen || this._host.restarting()) {
      return;
    }
    if (hello.pid !== own.pid || hello.hostname !== own.hostname) {
      this._host.restartedElsewhere();
    }
    // Else another page's comm to the same process.
  }

  /**
   * The record of the cell a restart interrupted, on the comm JupyterLab
   * disposed as the restart began: taken until the new process says hello
   * (the model's cells are the old process's until then). Other pages'
   * records are theirs.
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
  /** The session ids of the kernel processes the helper's messages came from, oldest first. */
  private _processSessions = new Set<string>();
  /** A restart this page heard of is under way or done, and its new process has not spoken. */
  private _newProcessDue = false;
  /** Whether a cell runs, from the last cell status heard; null when none was heard. */
  private _cellRunning: boolean | null = null;
  /** The msg_ids of the execute requests this page sent to start the helper. */
  private _helperRequests = new Set<string>();
}
