/**
 * The set-up the kernel-death specs share: kernel messages as the notebook
 * sends and receives them, and a model that saw its kernel die near its limit.
 */
import { KernelMemoryModel } from '../model/KernelMemoryModel';
import { FakeKernel } from './fakeKernel';
import { GiB, makeCpuSample, makeHello, wire } from './fixtures';

let nextId = 0;

export function msg(
  type: string,
  extra: { content?: any; parent?: string; metadata?: any } = {}
) {
  return {
    header: { msg_id: `m${++nextId}`, msg_type: type },
    parent_header: extra.parent ? { msg_id: extra.parent } : {},
    metadata: extra.metadata ?? {},
    content: extra.content ?? {}
  } as any;
}

/**
 * Makes the notebook send `cellId` to run, and the kernel start it as [count].
 */
export function run(kernel: FakeKernel, cellId: string, count: number): string {
  const request = msg('execute_request', { metadata: { cellId } });
  kernel.anyMessage.emit({ msg: request, direction: 'send' });
  const id = request.header.msg_id;
  kernel.anyMessage.emit({
    msg: msg('execute_input', {
      parent: id,
      content: { execution_count: count }
    }),
    direction: 'recv'
  });
  return id;
}

/** A model whose kernel died near its container's limit, running cell [12]. */
export function dead(): KernelMemoryModel {
  const model = new KernelMemoryModel({ historyCapacity: 100 });
  model.ingest(wire(makeHello()));
  model.ingest(
    wire(
      makeCpuSample({
        time: 1000,
        host: {
          rss_bytes: 3.9 * GiB,
          total_bytes: 64 * GiB,
          available_bytes: 40 * GiB,
          container: {
            limit_bytes: 4 * GiB,
            usage_bytes: 3.95 * GiB,
            inactive_file_bytes: 0,
            oom_kill_count: 0,
            cgroup_version: 2
          }
        }
      })
    )
  );
  model.noteKernelDeath('autorestarting', {
    cellId: 'cell-b',
    executionCount: 12,
    confirmed: true
  });
  return model;
}
