/**
 * The out-of-memory diagnosis view, loaded with the Memory tab. It follows
 * the active kernel, its cleanup actions and its allocation recording.
 */
import type { ISignal } from '@lumino/signaling';

import { followMonitor } from '../../ui/followMonitor';
import { OomDiagnosisView } from './OomDiagnosisView';
import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import type { ExecuteCommand } from '../../ui/commandIds';
import type { AllocationRecorder } from '../allocations/AllocationRecorder';
import type { MemoryActions } from '../cleanup/MemoryActions';

/** What the diagnosis needs. */
export interface IOomSidebarOptions {
  monitor: IVramMonitor;
  /**
   * A kernel's cleanup actions, which the remedies that free memory use.
   * Without them, those remedies are not offered.
   */
  actionsFor: (model: IKernelMemoryModel | null) => MemoryActions | null;
  /**
   * A kernel's allocation recording, which gives the lines that held memory.
   * Without it, those lines are not shown.
   */
  recorderFor: (model: IKernelMemoryModel | null) => AllocationRecorder | null;
  /**
   * Fires when a kernel's per-kernel parts were made after their code
   * loaded, so that the view asks for them again.
   */
  partsChanged?: ISignal<unknown, unknown>;
  /** Runs a command; each step of a remedy is one. */
  execute: ExecuteCommand;
}

/** Creates the diagnosis view, whose remedies run their steps in order. */
export function createOomDiagnosisView({
  monitor,
  partsChanged,
  execute,
  actionsFor,
  recorderFor
}: IOomSidebarOptions): OomDiagnosisView {
  const view = new OomDiagnosisView({
    settings: monitor.settings,
    run: async action => {
      // The steps run one after the other, because a remedy such as "insert
      // the allocator cell, then restart" must not race.
      for (const step of action.steps) {
        await execute(step.command, step.args);
      }
    }
  });
  return followMonitor(
    monitor,
    view,
    model => {
      view.model = model;
      view.actions = actionsFor(model);
      view.recorder = recorderFor(model);
    },
    partsChanged
  );
}
