/**
 * The overview's views, loaded with the Memory tab the first time it is
 * shown: each follows the monitor's current model and settings.
 */
import { deriveNotesWith } from '../../model/KernelVisibilityNotes';
import { deriveVisibilityNotes } from '../../model/visibilityNotes';
import { CommandIDs, ExecuteCommand } from '../../ui/commandIds';
import { showCurrentModel } from '../../ui/followMonitor';
import { GpuDeviceList } from './GpuDeviceList';
import { HostMemoryCard } from './HostMemoryCard';
import { MemoryTimeline } from './MemoryTimeline';
import { StateBanner } from './StateBanner';
import type { IVramMonitor } from '../../monitor/IVramMonitor';

/** What the overview's views need. */
export interface IOverviewSidebarOptions {
  /** The monitor whose current model and settings the views follow. */
  monitor: IVramMonitor;
  /** Runs a command; the timeline's span picker sets its setting with one. */
  execute: ExecuteCommand;
}

// The code that words the visibility notes, which the banner shows, loads
// here with the banner rather than with the page; from now on the models
// use it.
deriveNotesWith(deriveVisibilityNotes);

/** Creates the state banner, which says whether the kernel is watched and what cannot be seen. */
export function createStateBanner({
  monitor
}: IOverviewSidebarOptions): StateBanner {
  return showCurrentModel(monitor, new StateBanner(monitor.settings));
}

/** Creates the list of GPU cards, one per GPU that the kernel can see. */
export function createGpuDeviceList({
  monitor
}: IOverviewSidebarOptions): GpuDeviceList {
  return showCurrentModel(monitor, new GpuDeviceList(monitor.settings));
}

/** Creates the host RAM card. */
export function createHostMemoryCard({
  monitor
}: IOverviewSidebarOptions): HostMemoryCard {
  return showCurrentModel(monitor, new HostMemoryCard(monitor.settings));
}

/**
 * Creates the memory timeline, whose span picker changes the
 * `timelineWindowMinutes` setting through a command.
 */
export function createMemoryTimeline({
  monitor,
  execute
}: IOverviewSidebarOptions): MemoryTimeline {
  return showCurrentModel(
    monitor,
    new MemoryTimeline(
      monitor.settings,
      minutes => void execute(CommandIDs.setTimelineWindow, { minutes })
    )
  );
}
