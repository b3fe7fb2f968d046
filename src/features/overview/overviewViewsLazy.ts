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
  monitor: IVramMonitor;
  /** Runs a command (the timeline's window buttons). */
  execute: ExecuteCommand;
}

// The models word their visibility notes (which the banner shows) with code
// that loads here, with the banner, rather than with the page.
deriveNotesWith(deriveVisibilityNotes);

/** The state banner: whether the kernel is watched, and what cannot be seen. */
export function createStateBanner({
  monitor
}: IOverviewSidebarOptions): StateBanner {
  return showCurrentModel(monitor, new StateBanner(monitor.settings));
}

/** One card per GPU the kernel can see. */
export function createGpuDeviceList({
  monitor
}: IOverviewSidebarOptions): GpuDeviceList {
  return showCurrentModel(monitor, new GpuDeviceList(monitor.settings));
}

/** The host RAM card. */
export function createHostMemoryCard({
  monitor
}: IOverviewSidebarOptions): HostMemoryCard {
  return showCurrentModel(monitor, new HostMemoryCard(monitor.settings));
}

/** The memory timeline, whose window buttons change the setting. */
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
