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
import { SampleMessage } from '../protocol/sample';
import { KernelDeathFacts, RunningCell } from './kernelDeath';
import { KernelMarkKind, MemoryHistory } from './MemoryHistory';

/** What KernelEnds reads of the model it belongs to. */
export interface IKernelEndsHost {
  readonly history: MemoryHistory;
  latest(): SampleMessage | null;
  secondsSinceSample(now: number): number | null;
  /** When (local clock, seconds) the latest sample arrived; 0 before any. */
  lastSampleArrival(): number;
  /** The hello's hostname of the process the samples come from; null before its hello (or overheard). */
  hostname(): string | null;
  /** The timeline or the death changed. */
  changed(change: 'history' | 'death'): void;
}

/** Records where and why a notebook's kernel processes ended. */
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
    this._restartCapture = this._capture(now);
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
    const capture = this._restartCapture ?? this._capture(now);
    this._restartCapture = null;
    const last = capture.sample;
    const age = capture.age;
    this._death = {
      status,
      time: now,
      lastSample: last,
      figuresAge: age,
      runningCell,
      oomKillsAfter: null,
      machineOomKillsAfter: null
    };
    this._deathHostname = capture.hostname;
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
    this._deathHostname = null;
    this._awaitingDeathEvidence = false;
    this._host.changed('death');
  }

  /**
   * A sample arrived. The restarted kernel's first one says whether the
   * killer acted: its container's OOM kill count, if its container is the
   * dead kernel's (same limit); the machine's, if it is plausibly the same
   * machine (see `_sameMachineCount`).
   */
  sampled(sample: SampleMessage): void {
    if (!this._awaitingDeathEvidence) {
      return;
    }
    this._awaitingDeathEvidence = false;
    const death = this._death;
    if (!death) {
      return;
    }
    const now = sample.host.container;
    const before = death.lastSample?.host.container;
    const oomKillsAfter =
      now &&
      before &&
      now.oom_kill_count !== null &&
      now.limit_bytes === before.limit_bytes &&
      now.cgroup_version === before.cgroup_version
        ? now.oom_kill_count
        : null;
    const machineOomKillsAfter = this._sameMachineCount(death, sample);
    if (oomKillsAfter === null && machineOomKillsAfter === null) {
      return;
    }
    this._death = { ...death, oomKillsAfter, machineOomKillsAfter };
    this._host.changed('death');
  }

  /**
   * The machine's OOM kill count of the restarted kernel's first sample,
   * where it is plausibly the dead kernel's machine: the same RAM in all
   * (MemTotal), the same hostname where both hellos are known (a sample
   * heard before this page's hello has none), and a count not below the
   * dead kernel's last (a lower one: the machine rebooted, or it is another
   * machine). Null otherwise: unknown, never a guess.
   */
  private _sameMachineCount(
    death: KernelDeathFacts,
    sample: SampleMessage
  ): number | null {
    const last = death.lastSample?.host;
    const before = last?.oom_kill_count ?? null;
    const after = sample.host.oom_kill_count ?? null;
    const hostname = this._host.hostname();
    if (
      !last ||
      before === null ||
      after === null ||
      after < before ||
      last.total_bytes === null ||
      sample.host.total_bytes !== last.total_bytes ||
      (hostname !== null &&
        this._deathHostname !== null &&
        hostname !== this._deathHostname)
    ) {
      return null;
    }
    return after;
  }

  /** What a death or restart keeps of the process that ends: its last sample, its age, its host's name. */
  private _capture(now: number): RestartCapture {
    return {
      sample: this._host.latest(),
      age: this._host.secondsSinceSample(now),
      hostname: this._host.hostname()
    };
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
  /** The hello's hostname of the process that died (null: unknown). */
  private _deathHostname: string | null = null;
  private _restartCapture: RestartCapture | null = null;
}

interface RestartCapture {
  sample: SampleMessage | null;
  age: number | null;
  hostname: string | null;
}
