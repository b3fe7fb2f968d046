/**
 * Creates the "Save memory" section, which loads with the Memory tab. The
 * section follows the active notebook's kernel, because its buttons need that
 * kernel and its restart warning is shown only for that kernel.
 */
import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import { SnippetSection } from './SnippetSection';
import type { ExecuteCommand } from '../../ui/commandIds';
import type { SnippetLibrary } from './SnippetLibrary';

/** The options that the snippet section is created with. */
export interface ISnippetsSidebarOptions {
  monitor: IVramMonitor;
  library: SnippetLibrary;
  /** Runs a command; the section's buttons use it to insert a snippet. */
  execute: ExecuteCommand;
}

/** Creates the section with the snippet buttons and the restart warning. */
export function createSnippetSection({
  monitor,
  library,
  execute
}: ISnippetsSidebarOptions): SnippetSection {
  const section = new SnippetSection({ library, execute });
  const show = (_: IVramMonitor, model: IKernelMemoryModel | null) => {
    section.model = model;
  };
  monitor.currentChanged.connect(show);
  section.disposed.connect(() => monitor.currentChanged.disconnect(show));
  show(monitor, monitor.current);
  return section;
}
