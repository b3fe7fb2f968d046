/**
 * The reader of the `stop_process` reply (docs/protocol.md, "stop_process"):
 * what happened to the process, and the memory before and after. It is a
 * module of its own so that it loads with the first stop, not with the page
 * (the tree's readers in processes.ts load with every sample).
 */
import { readProcess, readTotals } from './processes';
import { FieldReader, Parsed, parseWith, ShapeError } from './reader';
import type { StopMemory, StopProcessResult } from './protocol.generated';

/** A non-negative integer (a GPU index). */
function index(r: FieldReader): number {
  const value = r.integer('index');
  if (value < 0) {
    throw new ShapeError(
      `${r.path}.index: expected an integer of at least 0, got ${value}`
    );
  }
  return value;
}

/** Reads the memory figures around a stop or a release (`StopMemory`). */
export function readStopMemory(m: FieldReader): StopMemory {
  return {
    totals: readTotals(m.nullableObject('totals')),
    available_bytes: m.bytes('available_bytes'),
    gpus: m.array('gpus').map((gpu, i) => {
      const g = FieldReader.of(gpu, `${m.path}.gpus[${i}]`);
      return { index: index(g), used_bytes: g.bytes('used_bytes') };
    })
  };
}

/** Read the `result` of a `stop_process` reply. Never throws. */
export function parseStopProcessResult(
  result: unknown
): Parsed<StopProcessResult> {
  return parseWith(result, 'stop_process', r => {
    const process = r.nullableObject('process');
    return {
      pid: r.integer('pid'),
      start_time: r.integer('start_time'),
      outcome: r.string('outcome'),
      refusal: r.nullableString('refusal'),
      reason: r.nullableString('reason'),
      signals: r.array('signals').map((s, i) => {
        if (typeof s !== 'string') {
          throw new ShapeError(`${r.path}.signals[${i}]: expected a string`);
        }
        return s;
      }),
      waited_s: r.number('waited_s'),
      process: process && readProcess(process.data, process.path),
      still_zombie: r.boolean('still_zombie'),
      before: readStopMemory(r.object('before')),
      after: readStopMemory(r.object('after')),
      elapsed_ms: r.number('elapsed_ms')
    };
  });
}
