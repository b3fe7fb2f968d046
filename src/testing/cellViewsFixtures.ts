/**
 * The set-up that the cell view specs share: a live model, and a cell
 * record's message as the kernel sends it.
 */
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { makeCellRecord } from './cellFixtures';
import { makeHello, wire } from './fixtures';

export function liveModel(): KernelMemoryModel {
  const model = new KernelMemoryModel({ historyCapacity: 10 });
  model.ingest(wire(makeHello()));
  return model;
}

export function cellMsg(record: ReturnType<typeof makeCellRecord>) {
  return wire({ type: 'cells', records: [record] });
}
