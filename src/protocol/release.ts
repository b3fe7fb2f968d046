/**
 * The parser of the `release_engine` reply (docs/protocol.md, "Releasing
 * what an engine started"): what the kernel started through Ray, Dask, a
 * multiprocessing pool, a DataLoader iterator or vLLM and can release, and
 * what a release did. The caller of the request reads its result with
 * `parseReleaseEngineResult`.
 *
 * The wire types are generated from protocol/protocol.schema.json
 * (protocol.generated.ts) and re-exported here under the names the frontend
 * imports; every key is read, so a new one is never dropped unseen.
 */
import { count } from './processes';
import { readStopMemory } from './stopProcess';
import { FieldReader, Parsed, parseWith } from './reader';
import type {
  Releasable,
  ReleasableProcess,
  ReleaseEngineResult,
  ReleaseOutcome,
  ReleaseStep
} from './protocol.generated';

export type {
  Releasable,
  ReleasableProcess,
  ReleaseEngineResult,
  ReleaseOutcome,
  ReleaseStep
} from './protocol.generated';

/** The kinds the helper names; a reader keeps any other string as is. */
export type ReleasableKind =
  'ray' | 'dask' | 'mp_pool' | 'dataloader_iter' | 'vllm';

function readProcesses(r: FieldReader, key: string): ReleasableProcess[] {
  return r.array(key).map((item, i) => {
    const p = FieldReader.of(item, `${r.path}.${key}[${i}]`);
    return {
      pid: count(p, 'pid', 1),
      start_time: count(p, 'start_time'),
      role: p.string('role')
    };
  });
}

function readReleasable(item: unknown, path: string): Releasable {
  const r = FieldReader.of(item, path);
  return {
    kind: r.string('kind'),
    name: r.string('name'),
    label: r.string('label'),
    processes: readProcesses(r, 'processes'),
    host_bytes: r.bytes('host_bytes'),
    gpus: r.array('gpus').map((gpu, i) => {
      const g = FieldReader.of(gpu, `${r.path}.gpus[${i}]`);
      return { index: count(g, 'index'), used_bytes: g.bytes('used_bytes') };
    })
  };
}

function readStep(item: unknown, path: string): ReleaseStep {
  const s = FieldReader.of(item, path);
  return {
    action: s.string('action'),
    ok: s.boolean('ok'),
    error: s.nullableString('error')
  };
}

function readOutcome(r: FieldReader): ReleaseOutcome {
  return {
    kind: r.string('kind'),
    name: r.string('name'),
    outcome: r.string('outcome'),
    reason: r.nullableString('reason'),
    steps: r
      .array('steps')
      .map((item, i) => readStep(item, `${r.path}.steps[${i}]`)),
    processes: readProcesses(r, 'processes'),
    still_alive: readProcesses(r, 'still_alive'),
    waited_s: r.number('waited_s'),
    before: readStopMemory(r.object('before')),
    after: readStopMemory(r.object('after'))
  };
}

/** Read the `result` of a `release_engine` reply. Never throws. */
export function parseReleaseEngineResult(
  result: unknown
): Parsed<ReleaseEngineResult> {
  return parseWith(result, 'release_engine', r => {
    const released = r.nullableObject('released');
    return {
      mode: r.string('mode'),
      releasables: r
        .array('releasables')
        .map((item, i) => readReleasable(item, `${r.path}.releasables[${i}]`)),
      released: released && readOutcome(released),
      elapsed_ms: r.number('elapsed_ms')
    };
  });
}
