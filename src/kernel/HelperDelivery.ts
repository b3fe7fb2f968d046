/**
 * Delivers the helper to a kernel once per run, where a run is one attach of
 * the connection, numbered by its generation. Whichever of two paths comes
 * first delivers it: the run's own bootstrap (./helperBootstrapLazy.ts, which
 * reads the language from the kernel's info, then sends the code and the
 * comm_open), or `send`, ahead of a notebook cell that is about to run in a
 * kernel with no helper yet (see KernelHelperConnection.deliverBeforeExecution).
 * It asks the connection about what the connection decides, such as which
 * run is current and which comm it listens to.
 */
import { Kernel } from '@jupyterlab/services';

import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { HelperConfig, PartialHelperConfig } from '../protocol/messages';
import type { IHelperBootstrapHost } from './helperBootstrapLazy';
import { HelperReadiness } from './HelperReadiness';
import { describeFailure } from './kernelFailures';

/** Delivers the helper to a kernel once per run of the connection. */
export class HelperDelivery {
  constructor(options: HelperDelivery.IOptions) {
    this._options = options;
    this._readiness = options.readiness;
  }

  /** The bootstrap code once it is loaded; null before that. */
  get code(): string | null {
    return this._readiness.code;
  }

  /** True when the kernel's language is known to be Python. */
  isPython(kernelId: string): boolean {
    return this._readiness.isPython(kernelId);
  }

  /** Runs run `generation`'s own delivery: the language (from the spec, then the kernel's info), the code, and the comm. */
  start(kernel: Kernel.IKernelConnection, generation: number): void {
    // The spec tells the language before the kernel answers, because a
    // kernel that is busy with a cell, or not started yet, answers its info
    // request late.
    this._readiness.watchSpec(kernel);
    // The steps are a chunk of their own (./helperCode.ts): a page that never
    // meets a kernel never fetches them.
    this._readiness.loadSteps().then(
      steps => {
        if (this._options.isCurrent(generation)) {
          void steps.bootstrapHelper(kernel, this._hostFor(kernel, generation));
        }
      },
      reason => {
        if (this._options.isCurrent(generation)) {
          this._options.model.setState(
            'helper-failed',
            describeFailure("could not load the helper's code", reason)
          );
        }
      }
    );
  }

  /**
   * Send `code` now for run `generation`, unless that run sent it already.
   * The code is only known once the delivery steps are loaded too
   * (HelperReadiness.load), so this sends in the caller's tick.
   */
  send(
    kernel: Kernel.IKernelConnection,
    generation: number,
    code: string
  ): void {
    const steps = this._readiness.steps;
    if (steps && this._claim(generation)) {
      void steps.sendHelper(kernel, code, this._hostFor(kernel, generation));
    }
  }

  /** Returns true only once per run, so that each run sends its helper once, either itself or ahead of a cell. */
  private _claim(generation: number): boolean {
    if (this._delivered === generation) {
      return false;
    }
    this._delivered = generation;
    return true;
  }

  private _hostFor(
    kernel: Kernel.IKernelConnection,
    generation: number
  ): IHelperBootstrapHost {
    const options = this._options;
    const current = () => options.isCurrent(generation);
    return {
      model: options.model,
      stale: () => !current(),
      loadBootstrapCode: () => this._readiness.load(),
      languageKnown: language =>
        this._readiness.noteLanguage(kernel.id, language),
      unsupported: () => this._readiness.noteUnsupported(kernel.id),
      config: options.config,
      sent: options.sent,
      replaces: () => options.commsLeftOpen(kernel.id),
      claimDelivery: () => this._claim(generation),
      delivered: () => this._delivered === generation,
      adopt: comm => {
        if (current()) {
          options.adopt(comm);
        }
      },
      abandon: () => {
        if (current()) {
          options.abandon();
        }
      },
      redeliver: () => {
        const tries =
          this._redelivered.generation === generation
            ? this._redelivered.tries
            : 0;
        if (!current() || tries >= MAX_REDELIVERIES) {
          return false;
        }
        this._redelivered = { generation, tries: tries + 1 };
        options.closeComm();
        return true;
      }
    };
  }

  private _options: HelperDelivery.IOptions;
  private _readiness: HelperReadiness;
  /** The run whose helper was sent, either by the run itself or ahead of a cell. */
  private _delivered = -1;
  /** How many times a run sent its helper again after the kernel skipped it. */
  private _redelivered = { generation: -1, tries: 0 };
}

/**
 * How many times one run's helper is sent again after the kernel skipped it.
 * Each resend follows the reply that reported the skip, after which the
 * kernel runs what comes next, so needing more would mean that something
 * else is wrong.
 */
export const MAX_REDELIVERIES = 2;

/** The types that go with HelperDelivery. */
export namespace HelperDelivery {
  /** The options a new HelperDelivery is constructed with. */
  export interface IOptions {
    readiness: HelperReadiness;
    model: KernelMemoryModel;
    config: () => HelperConfig | PartialHelperConfig;
    /** Returns the comms that an earlier page left open in a kernel, for the comm_open's `replaces`. */
    commsLeftOpen: (kernelId: string) => string[];
    /** True when run `generation` is the connection's current one and the connection is not disposed. */
    isCurrent: (generation: number) => boolean;
    /** Listens to this comm, the current run's new one. */
    adopt: (comm: Kernel.IComm) => void;
    /** Forgets the adopted comm, because it could not be opened or the helper did not start. */
    abandon: () => void;
    /** Closes the adopted comm, because the kernel skipped the helper that was sent with it. */
    closeComm: () => void;
    /** Called when a bootstrap went to the kernel as the execute request `msgId`. */
    sent?: (msgId: string) => void;
  }
}
