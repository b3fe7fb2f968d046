/**
 * The samples the helper sends to other frontends' comms, shown while this
 * page's own comm waits for the kernel.
 *
 * A page opened while a cell runs (a reload during a training loop, a new
 * tab the next morning, a second browser) cannot open its comm: the kernel
 * reads the bootstrap and the comm_open only when the cell finishes, which
 * may be hours away, and that is when the figures matter most. But the
 * helper's sampler runs in a thread of its own and sends every sample to each
 * comm still open in the kernel (the comm of the page that started the cell,
 * which its `pagehide` could not close for the same reason), and a kernel
 * publishes comm messages on IOPub, which every frontend connected to the
 * kernel receives. So this page can show those samples until its own comm
 * says hello.
 *
 * Only `sample` messages are taken (records, replies and hellos belong to
 * the comm they were sent on; the history request of this page's own comm
 * recovers the records), and only ones that parse as samples: other comms
 * (widgets, other extensions) carry other data. The helper sends the same
 * sample to every comm it has, so a sample whose time is not after the last
 * one taken is a copy and is skipped.
 */
import { Kernel, KernelMessage } from '@jupyterlab/services';

import { parseKernelMessage } from '../protocol';
import { SampleMessage } from '../sampleProtocol';

export class OverheardSamples {
  /** `take` gets each new sample heard, in the order the kernel sent them. */
  constructor(take: (sample: SampleMessage) => void) {
    this._take = take;
  }

  /** The kernel listened to now; null when none. */
  get kernel(): Kernel.IKernelConnection | null {
    return this._kernel;
  }

  /** Listen to `kernel`'s IOPub (and stop listening to any other). */
  listen(kernel: Kernel.IKernelConnection): void {
    if (kernel === this._kernel) {
      return;
    }
    this.stop();
    this._kernel = kernel;
    this._lastTime = -Infinity;
    kernel.iopubMessage.connect(this._onIOPub, this);
  }

  /** Stop listening (this page's own comm speaks now, or the kernel went). */
  stop(): void {
    this._kernel?.iopubMessage.disconnect(this._onIOPub, this);
    this._kernel = null;
  }

  private _onIOPub(
    _: Kernel.IKernelConnection,
    msg: KernelMessage.IIOPubMessage
  ): void {
    if (!KernelMessage.isCommMsgMsg(msg)) {
      return;
    }
    const data: unknown = msg.content.data;
    // Cheap first look: most comm traffic in a notebook is not ours.
    if (
      typeof data !== 'object' ||
      data === null ||
      (data as { type?: unknown }).type !== 'sample'
    ) {
      return;
    }
    const result = parseKernelMessage(data);
    if (result.kind !== 'message' || result.message.type !== 'sample') {
      return; // not the helper's sample: none of this page's business
    }
    const sample = result.message;
    if (!(sample.time > this._lastTime)) {
      return; // the same sample sent to another comm
    }
    this._lastTime = sample.time;
    this._take(sample);
  }

  private _take: (sample: SampleMessage) => void;
  private _kernel: Kernel.IKernelConnection | null = null;
  private _lastTime = -Infinity;
}
