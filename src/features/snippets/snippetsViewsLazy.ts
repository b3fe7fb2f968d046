/**
 * The "Save memory" section, loaded with the Memory tab; it follows the
 * active notebook's kernel (whether a snippet needs a restart there).
 */
import type { IKernelMemoryModel } from '../../model/IKernelMemoryModel';
import type { IVramMonitor } from '../../monitor/IVramMonitor';
import { SnippetSection } from './SnippetSection';
import type { ExecuteCommand } from '../../ui/commandIds';
import type { SnippetLibrary } from './SnippetLibrary';

/** What the snippet section needs. */
export interface ISnippetsSidebarOptions {
  monitor: IVramMonitor;
  library: SnippetLibrary;
  /** Runs a command (insert a snippet). */
  execute: ExecuteCommand;
}

/** The snippet buttons and the restart warning. */
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
