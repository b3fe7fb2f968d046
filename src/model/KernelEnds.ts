/**
 * Where a notebook's kernel processes ended, and why: a restart the user
 * asked for, a kernel change, or a death (the kernel died or was killed
 * without being asked). Each end is marked on the timeline where the
 * process's figures stop; a death also keeps what its last figures said
 * and the cell it was running, for KernelDeathView to explain.
 *
 * JupyterLab says `restarting` first whether or not the user asked, so a
 * restart is captured first (`captureBeforeRestart`) and decided after
 * (`settleRestart` or `noteKernelDeath`).
 */
import { SampleMessage } from '../sampleProtocol';
import { KernelDeathFacts, RunningCell } from './kernelDeath';
import { KernelMarkKind, MemoryHistory } from './MemoryHistory';

/** What KernelEnds reads of the model it belongs to. */
export interface IKernelEndsHost {
  readonly history: MemoryHistory;
  latest(): SampleMessage | null;
  secondsSinceSample(now: number): number | null;
  /** When (local clock, seconds) the latest sample arrived; 0 before any. */
  lastSampleArrival(): number;
  /** The timeline or the death changed. */
  changed(change: 'history' | 'death'): void;
}

export class KernelEnds {
  constructor(host: IKernelEndsHost) {
    this._host = host;
  }

  /** The facts of the kernel's last unasked-for death; null when none since the last user restart or kernel change. */
  get death(): KernelDeathFacts | null {
    return this._death;
  }

  captureBeforeRestart(now: number): void {
    if (this._restartCapture) {
      return; // the second `restarting` of one restart: the first saw the figures
    }
    this._restartCapture = {
      sample: this._host.latest(),
      age: this._host.secondsSinceSample(now)
    };
  }

  settleRestart(): void {
    const capture = this._restartCapture;
    if (!capture) {
      return;
    }
    this._restartCapture = null;
    this.clearKernelDeath();
    this._markKernelEnd('restarted', capture.sample, capture.age);
  }

  dropRestartCapture(): void {
    this._restartCapture = null;
  }

  noteKernelChange(now: number): void {
    this.clearKernelDeath();
    this._markKernelEnd('changed', this._host.latest(), null, now);
  }

  noteKernelDeath(
    status: KernelDeathFacts['status'],
    runningCell: RunningCell | null,
    now: number
  ): void {
    const capture = this._restartCapture ?? {
      sample: this._host.latest(),
      age: this._host.secondsSinceSample(now)
    };
    this._restartCapture = null;
    const last = capture.sample;
    const age = capture.age;
    this._death = {
      status,
      time: now,
      lastSample: last,
      figuresAge: age,
      runningCell,
      oomKillsAfter: null
    };
    this._awaitingDeathEvidence = true;
    this._markKernelEnd('died', last, age);
    this._host.changed('death');
  }

  clearKernelDeath(): void {
    this._restartCapture = null;
    if (!this._death) {
      return;
    }
    this._death = null;
    this._awaitingDeathEvidence = false;
    this._host.changed('death');
  }

  /**
   * A sample arrived. The restarted kernel's first one: if its container is
   * the dead kernel's (same limit), its OOM kill count says whether the
   * killer acted.
   */
  sampled(sample: SampleMessage): void {
    if (!this._awaitingDeathEvidence) {
      return;
    }
    this._awaitingDeathEvidence = false;
    const death = this._death;
    const now = sample.host.container;
    const before = death?.lastSample?.host.container;
    if (
      !death ||
      !now ||
      !before ||
      now.oom_kill_count === null ||
      now.limit_bytes !== before.limit_bytes ||
      now.cgroup_version !== before.cgroup_version
    ) {
      return;
    }
    this._death = { ...death, oomKillsAfter: now.oom_kill_count };
    this._host.changed('death');
  }

  /**
   * Mark on the timeline where a kernel process ended: on the kernel's
   * clock, its last sample's time plus the wait since that sample came (so
   * its line ends there and the next process's starts after a gap). Without
   * a sample of that process (none came, or the connection already forgot
   * it), the history's newest row stands in for it.
   */
  private _markKernelEnd(
    kind: KernelMarkKind,
    last: SampleMessage | null,
    age: number | null,
    now: number = Date.now() / 1000
  ): void {
    const history = this._host.history;
    const newest = history.lastTime;
    if (Number.isNaN(newest)) {
      return; // nothing charted: nothing to separate
    }
    const arrived = this._host.lastSampleArrival();
    const since = age ?? (arrived > 0 ? Math.max(0, now - arrived) : 0);
    const at = (last ? Math.max(last.time, newest) : newest) + since;
    history.markKernelEnd(at, kind);
    this._host.changed('history');
  }

  private _host: IKernelEndsHost;
  private _death: KernelDeathFacts | null = null;
  private _awaitingDeathEvidence = false;
  private _restartCapture: {
    sample: SampleMessage | null;
    age: number | null;
  } | null = null;
}
