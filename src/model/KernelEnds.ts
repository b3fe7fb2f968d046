/**
 * Where a notebook's kernel processes ended, and why. The reason is a
 * restart that the user asked for, a kernel change, or a death, meaning the
 * kernel died or was killed without being asked. Each end is marked on the
 * timeline where the process's figures stop. A death also keeps what its
 * last figures said and the cell it was running, so that KernelDeathView can
 * explain it.
 *
 * JupyterLab reports `restarting` first whether or not the user asked for
 * it. So a restart is captured first (`captureBeforeRestart`) and classified
 * afterwards (`settleRestart` or `noteKernelDeath`).
 */
import { SampleMessage } from '../protocol/sample';
import { KernelDeathFacts, RunningCell } from './kernelDeath';
import { KernelMarkKind, MemoryHistory } from './MemoryHistory';

/** What KernelEnds reads of the model it belongs to. */
export interface IKernelEndsHost {
  readonly history: MemoryHistory;
  latest(): SampleMessage | null;
  secondsSinceSample(now: number): number | null;
  /**
   * When the latest sample arrived, in seconds on the local clock, or 0 before
   * any.
   */
  lastSampleArrival(): number;
  /**
   * The hostname from the hello of the process that the samples come from.
   * It is null before that hello, and when the samples were overheard.
   */
  hostname(): string | null;
  /** Called when the timeline or the death changed. */
  changed(change: 'history' | 'death'): void;
}

/** Records where and why a notebook's kernel processes ended. */
export class KernelEnds {
  constructor(host: IKernelEndsHost) {
    this._host = host;
  }

  /**
   * The facts of the kernel's last death that nobody asked for, or null when
   * there was none since the last restart by the user or kernel change.
   */
  get death(): KernelDeathFacts | null {
    return this._death;
  }

  captureBeforeRestart(now: number): void {
    if (this._restartCapture) {
      // This is the second `restarting` of one restart; the first one already
      // captured the figures.
      return;
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
   * Called when a sample arrived. The restarted kernel's first sample tells
   * whether the out-of-memory killer acted. It uses the container's OOM kill
   * count if the container is the dead kernel's (it has the same limit), and
   * the machine's count if it is plausibly the same machine (see
   * `_sameMachineCount`).
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
   * The machine's OOM kill count from the restarted kernel's first sample,
   * if that machine is plausibly the dead kernel's. That requires the same
   * total RAM (MemTotal), the same hostname where both hellos are known (a
   * sample heard before this page's hello has none), and a count not below
   * the dead kernel's last one; a lower count means the machine rebooted or
   * is another machine. Otherwise it returns null, meaning unknown, because
   * a guess could blame the wrong cause.
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

  /**
   * What a death or restart keeps of the process that ends: its last sample,
   * the sample's age and its host's name.
   */
  private _capture(now: number): RestartCapture {
    return {
      sample: this._host.latest(),
      age: this._host.secondsSinceSample(now),
      hostname: this._host.hostname()
    };
  }

  /**
   * Marks on the timeline where a kernel process ended. On the kernel's
   * clock, that is its last sample's time plus the wait since that sample
   * came, so that its line ends there and the next process's line starts
   * after a gap. Without a sample of that process, because none came or the
   * connection already forgot it, the history's newest row stands in for it.
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
      // Nothing is charted yet, so there is nothing to separate.
      return;
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
  /**
   * The hostname from the hello of the process that died, or null if unknown.
   */
  private _deathHostname: string | null = null;
  private _restartCapture: RestartCapture | null = null;
}

interface RestartCapture {
  sample: SampleMessage | null;
  age: number | null;
  hostname: string | null;
}
