/**
 * The set-up the cleanup command specs share: a sidebar and the commands on a
 * live monitor of a fake kernel, and the result the sidebar shows.
 */
import { CommandRegistry } from '@lumino/commands';
import { MessageLoop } from '@lumino/messaging';

import { DeletePlan } from '../features/cleanup/deletePlan';
import { loadFullSidebar } from './sidebarFixtures';
import { liveMonitorOnFakeKernel, registerTestCommands } from './fakeKernel';
import { actionsFor } from '../features/cleanup/cleanupActionsPart';

export async function setup() {
  const { kernel, sessionContext, comm, monitor } =
    await liveMonitorOnFakeKernel({});
  expect(monitor.current?.state).toBe('live');

  const commands = new CommandRegistry();
  const sidebar = await loadFullSidebar({
    monitor,
    actionsFor: model => actionsFor(monitor, model),
    execute: id => void commands.execute(id)
  });
  const confirmed: DeletePlan[] = [];
  let answer = true;
  const { app, notes } = registerTestCommands(commands, {
    monitor,
    sidebar,
    confirmDelete: async plan => {
      confirmed.push(plan);
      return answer;
    }
  });
  const render = () => {
    MessageLoop.flush();
  };
  const q = (selector: string) =>
    sidebar.node.querySelector(selector) as HTMLElement | null;
  /** Makes the kernel answer the last request with `result`. */
  const reply = (result: unknown) => comm.reply(result);
  return {
    kernel,
    sessionContext,
    comm,
    monitor,
    commands,
    app,
    sidebar,
    notes,
    confirmed,
    setAnswer: (a: boolean) => (answer = a),
    render,
    q,
    reply,
    dispose: () => {
      sidebar.dispose();
      monitor.dispose();
    }
  };
}

/** The lines of the result the sidebar shows, each as its text. */
export function resultLines(t: {
  q: (selector: string) => HTMLElement | null;
}): string[] {
  const node = t.q('[data-vram-role="action-result"]')!;
  return Array.from(node.querySelectorAll('.jp-vram-Actions-resultLine')).map(
    n => n.textContent ?? ''
  );
}
