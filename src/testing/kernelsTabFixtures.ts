/**
 * The set-up that the Kernels tab specs share: a session source that they add
 * kernels to.
 */
import { Signal } from '@lumino/signaling';

import { IKernelSessionSource } from '../features/kernels/KernelsOverview';
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { IMonitoredSessionEntry } from '../monitor/monitoredSession';

/** The monitor's sessions, set by hand. */
export class FakeSource implements IKernelSessionSource {
  entries: IMonitoredSessionEntry[] = [];
  sessionsChanged = new Signal<this, void>(this);
  sessions() {
    return this.entries;
  }
  add(kernelId: string | null, path: string): KernelMemoryModel {
    const model = new KernelMemoryModel({ historyCapacity: 10 });
    const sessionContext: any = {
      path,
      kernelDisplayName: 'Python 3 (ipykernel)',
      session: kernelId ? { kernel: { id: kernelId, name: 'python3' } } : null
    };
    this.entries.push({
      model,
      sessionContext,
      panels: [{ sessionContext } as any],
      connection: null as any
    });
    this.sessionsChanged.emit();
    return model;
  }
}
