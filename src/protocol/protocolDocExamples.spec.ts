/**
 * Reads every JSON example of docs/protocol.md with the frontend's readers
 * and validates it against the protocol's JSON Schema
 * (protocol/protocol.schema.json). An example that the frontend would
 * reject (a renamed field, a wrong type, a field the reader needs that the
 * example leaves out), or that the schema does not allow, fails here, so
 * that the documentation cannot drift from the code.
 *
 * The doc is read at test time. Its fenced `json` blocks are split into
 * top-level values; the names the doc uses for shapes it shows elsewhere
 * (`Snapshot`, `RecordingState`, `OomDiagnosis`, `[CellMemoryRecord, …]`)
 * are replaced by those examples before parsing. Each value is matched to
 * its reader by its `type` or its first key; a value no rule matches fails,
 * so a new example must be given a reader here.
 */
import {
  parseAllocationSites,
  parseAllocationSnapshot,
  parseCellAliveMessage,
  parseRecordingBroadcast,
  parseRecordingState
} from './allocation';
import Ajv from 'ajv';
import { parseCellRecord, parseHistoryResult } from './cell';
import { parseClusterActionResult, parseClusterMessage } from './cluster';
import { readCellCluster } from './clusterRecord';
import {
  parseDeleteResult,
  parseFreeMemoryResult,
  parseInspectResult
} from './cleanup';
import { readOomDiagnosis } from './oom';
import {
  HelperRequestType,
  parseKernelMessage,
  PROTOCOL_VERSION
} from './messages';
import { parseWith } from './reader';
import { parseNotebookNames } from '../features/snippets/notebookNames';
import { parseCellProcessTree, parseProcessTree } from './processes';
import { parseEstimateMemoryResult, readEstimateProgress } from './estimate';
import { parseReleaseEngineResult } from './release';
import { parseStopProcessResult } from './stopProcess';
import { parseTimeline } from './timeline';

// These are Node's globals under jest; they are declared here because the
// project's TypeScript config loads no Node types.
declare const require: (id: string) => unknown;
declare const __dirname: string;
const fs = require('fs') as {
  readFileSync(file: string, encoding: 'utf8'): string;
};
const path = require('path') as { resolve(...parts: string[]): string };

const DOC = fs.readFileSync(
  path.resolve(__dirname, '..', '..', 'docs', 'protocol.md'),
  'utf8'
);

const SCHEMA = JSON.parse(
  fs.readFileSync(
    path.resolve(__dirname, '..', '..', 'protocol', 'protocol.schema.json'),
    'utf8'
  )
) as { definitions: { [name: string]: unknown } };

/** Validates a value against the schema's root or one of its definitions. */
const ajv = new Ajv({ allErrors: true, allowUnionTypes: true });
ajv.addSchema(SCHEMA, 'protocol');

/**
 * The schema definition that each example's first key stands for. Messages,
 * which have a `type`, are validated against the root instead.
 */
const DEFINITION_BY_FIRST_KEY: { [key: string]: string } = {
  times: 'TimelineColumns',
  record_id: 'CellMemoryRecord',
  kind: 'OomDiagnosis',
  host: 'MemorySnapshot',
  actions_run: 'FreeMemoryResult',
  listing_id: 'InspectResult',
  deleted: 'DeleteResult',
  model: 'NotebookNamesResult',
  enabled: 'RecordingState',
  recording: 'AllocationSitesResult',
  format: 'AllocationSnapshotResult',
  method: 'ProcessTree',
  host_before_bytes: 'CellProcessTree',
  pid: 'StopProcessResult',
  mode: 'ReleaseEngineResult',
  status: 'EstimateMemoryResult',
  engine: 'ClusterActionResult',
  clusters: 'CellCluster'
};

/** The schema's complaints about an example; empty when it is valid. */
function schemaErrors(text: string, value: unknown): string[] {
  const { firstKey, type } = signature(text);
  const definition =
    type === null ? DEFINITION_BY_FIRST_KEY[firstKey ?? ''] : null;
  if (type === null && !definition) {
    return [`no schema definition for an example starting with "${firstKey}"`];
  }
  const ref = definition ? `protocol#/definitions/${definition}` : 'protocol';
  const validate = ajv.getSchema(ref);
  if (!validate) {
    return [`the schema has no ${ref}`];
  }
  if (validate(value)) {
    return [];
  }
  return (validate.errors ?? []).map(
    e =>
      `${definition ?? 'message'}${e.instancePath}: ${e.message} ${JSON.stringify(e.params)}`
  );
}

/**
 * Every request type that the frontend can send. The record type makes a
 * missing one fail to compile.
 */
const REQUEST_TYPES: Record<HelperRequestType, true> = {
  configure: true,
  snapshot: true,
  ping: true,
  history: true,
  free_memory: true,
  inspect: true,
  delete: true,
  notebook_names: true,
  record_allocations: true,
  allocation_sites: true,
  allocation_snapshot: true,
  stop_process: true,
  release_engine: true,
  estimate_memory: true,
  cluster_action: true
};

interface Example {
  /** The line of the doc where the block starts, used in failure messages. */
  line: number;
  text: string;
}

/**
 * The fenced json blocks, split into top-level values, since a block may
 * hold several.
 */
function examples(doc: string): Example[] {
  const out: Example[] = [];
  const lines = doc.split('\n');
  let start = -1;
  for (let i = 0; i < lines.length; i++) {
    if (start < 0 && lines[i].trim() === '```json') {
      start = i + 1;
    } else if (start >= 0 && lines[i].trim() === '```') {
      for (const text of topLevelValues(lines.slice(start, i).join('\n'))) {
        out.push({ line: start, text });
      }
      start = -1;
    }
  }
  return out;
}

function topLevelValues(block: string): string[] {
  const values: string[] = [];
  let depth = 0;
  let inString = false;
  let from = -1;
  for (let i = 0; i < block.length; i++) {
    const c = block[i];
    if (inString) {
      if (c === '\\') {
        i++;
      } else if (c === '"') {
        inString = false;
      }
      continue;
    }
    if (c === '"') {
      inString = true;
    } else if (c === '{' || c === '[') {
      if (depth === 0) {
        from = i;
      }
      depth++;
    } else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) {
        values.push(block.slice(from, i + 1));
      }
    }
  }
  return values;
}

/** The first key of an example's top-level object, and its `type` if it has one. */
function signature(text: string): {
  firstKey: string | null;
  type: string | null;
} {
  const first = /^\{\s*"([^"]+)"/.exec(text);
  const type = /^\{\s*"type":\s*"([^"]+)"/.exec(text);
  return { firstKey: first ? first[1] : null, type: type ? type[1] : null };
}

const ALL = examples(DOC);

/**
 * The first example whose first key is `key`, which is a named shape that
 * the other examples refer to. Later examples of the same shape (an OOM
 * diagnosis of another kind) are read and validated as any other.
 */
function namedShape(key: string): string {
  const found = ALL.filter(e => signature(e.text).firstKey === key);
  if (found.length === 0) {
    throw new Error(`protocol.md: expected an example starting with "${key}"`);
  }
  return found[0].text;
}

const SHAPES: { [name: string]: string } = {
  Snapshot: namedShape('host'),
  RecordingState: namedShape('enabled'),
  OomDiagnosis: namedShape('kind'),
  CellMemoryRecord: namedShape('record_id')
};

/**
 * Replaces the shape names that the doc uses in place of a value with those
 * examples.
 */
function substitute(text: string): string {
  let out = text.replace(
    /\[CellMemoryRecord, …\]/g,
    () => `[${SHAPES.CellMemoryRecord}]`
  );
  for (let round = 0; round < 3; round++) {
    out = out.replace(
      /(:\s*)(Snapshot|RecordingState|OomDiagnosis)\b/g,
      (_m, colon: string, name: string) => colon + SHAPES[name]
    );
  }
  return out;
}

function json(example: Example): unknown {
  const text = substitute(example.text);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(
      `protocol.md line ${example.line}: not JSON after substitution (${String(e)}):\n${text}`
    );
  }
}

function expectValue<T>(
  parsed: { value: T } | { error: string },
  where: string
): T {
  if ('error' in parsed) {
    throw new Error(`${where}: ${parsed.error}`);
  }
  return parsed.value;
}

/** The reader of each example, by its `type` or its first key. */
function read(example: Example): string {
  const where = `protocol.md line ${example.line}`;
  const { firstKey, type } = signature(example.text);
  const value = json(example);
  if (type === 'open') {
    const open = value as {
      protocol?: unknown;
      config?: unknown;
      replaces?: unknown;
    };
    expect(open.protocol).toBe(PROTOCOL_VERSION);
    return 'open';
  }
  if (type !== null && type in REQUEST_TYPES) {
    expect(typeof (value as { request_id?: unknown }).request_id).toBe(
      'string'
    );
    return `request ${type}`;
  }
  switch (type) {
    case 'hello':
    case 'sample':
    case 'cells':
    case 'reply':
    case 'error': {
      const parsed = parseKernelMessage(value);
      if (parsed.kind !== 'message') {
        throw new Error(`${where}: ${JSON.stringify(parsed)}`);
      }
      if (parsed.message.type === 'cells') {
        expect(parsed.message.invalid).toEqual([]);
      }
      return type;
    }
    case 'cell_alive':
      expect(parseCellAliveMessage(value)).not.toBeNull();
      return type;
    case 'allocation_recording':
      expect(parseRecordingBroadcast(value)).not.toBeNull();
      return type;
    case 'estimate_progress':
      expect(readEstimateProgress(value)).not.toBeNull();
      return type;
    case 'cluster':
      // Every part must read: a dropped worker or event would be a note.
      expect(expectValue(parseClusterMessage(value), where).notes).toEqual([]);
      return type;
    case null:
      break;
    default:
      throw new Error(`${where}: no reader for an example of type "${type}"`);
  }
  switch (firstKey) {
    case 'times':
      expect(
        expectValue(parseTimeline({ timeline: value }), where)
      ).not.toBeNull();
      return 'timeline';
    case 'record_id': {
      const parsed = parseCellRecord(value, where);
      if ('error' in parsed) {
        throw new Error(parsed.error);
      }
      const history = parseHistoryResult({ records: [value] });
      expect(history.errors).toEqual([]);
      return 'CellMemoryRecord';
    }
    case 'kind':
      expectValue(parseWith(value, 'oom', readOomDiagnosis), where);
      return 'OomDiagnosis';
    case 'host':
      // A Snapshot has no reader of its own, so it is read as the `before`
      // of a free_memory result.
      expectValue(
        parseFreeMemoryResult({
          actions_run: [],
          gc_collected: null,
          empty_cache: null,
          before: value,
          after: value,
          elapsed_ms: 0
        }),
        where
      );
      return 'Snapshot';
    case 'actions_run':
      expectValue(parseFreeMemoryResult(value), where);
      return 'FreeMemoryResult';
    case 'listing_id':
      expectValue(parseInspectResult(value), where);
      return 'InspectResult';
    case 'deleted':
      expectValue(parseDeleteResult(value), where);
      return 'DeleteResult';
    case 'model': {
      const names = parseNotebookNames(value);
      const raw = value as { [key: string]: unknown };
      for (const key of Object.keys(
        names.names
      ) as (keyof typeof names.names)[]) {
        expect(names.names[key]).toEqual(raw[key]);
      }
      expect(names.torchImported).not.toBeNull();
      expect(names.runtime.cudaInitialized).not.toBeNull();
      expect(names.runtime.tensorflowInitialized).not.toBeNull();
      return 'NotebookNames';
    }
    case 'enabled':
      expectValue(parseRecordingState(value), where);
      return 'RecordingState';
    case 'recording':
      expectValue(parseAllocationSites(value), where);
      return 'AllocationSites';
    case 'method':
      expectValue(parseProcessTree(value), where);
      return 'ProcessTree';
    case 'host_before_bytes':
      expect(expectValue(parseCellProcessTree(value), where)).toBeDefined();
      return 'CellProcessTree';
    case 'pid':
      expectValue(parseStopProcessResult(value), where);
      return 'StopProcessResult';
    case 'mode':
      expectValue(parseReleaseEngineResult(value), where);
      return 'ReleaseEngineResult';
    case 'status':
      expectValue(parseEstimateMemoryResult(value), where);
      return 'EstimateMemoryResult';
    case 'engine':
      expectValue(parseClusterActionResult(value), where);
      return 'ClusterActionResult';
    case 'clusters':
      expect(
        expectValue(
          parseWith({ cluster: value }, 'record', readCellCluster),
          where
        )
      ).toBeDefined();
      return 'CellCluster';
    default:
      throw new Error(
        `${where}: no reader for an example starting with "${firstKey}":\n${example.text}`
      );
  }
}

/**
 * The inline examples, in backticks, of results that have no block of their
 * own.
 */
function inlineExamples(doc: string, start: string): string[] {
  const out: string[] = [];
  const pattern = /`(\{[^`]*\})`/g;
  let match: RegExpExecArray | null;
  while ((match = pattern.exec(doc)) !== null) {
    if (match[1].startsWith(start)) {
      out.push(match[1]);
    }
  }
  return out;
}

describe('docs/protocol.md examples', () => {
  it('has json examples', () => {
    expect(ALL.length).toBeGreaterThan(20);
  });

  it.each(
    ALL.map(e => [
      `line ${e.line}: ${e.text.slice(0, 50).replace(/\s+/g, ' ')}`,
      e
    ])
  )('reads %s', (_name, example) => {
    expect(typeof read(example as Example)).toBe('string');
  });

  it.each(
    ALL.map(e => [
      `line ${e.line}: ${e.text.slice(0, 50).replace(/\s+/g, ' ')}`,
      e
    ])
  )('validates %s against the schema', (_name, example) => {
    const e = example as Example;
    expect(schemaErrors(e.text, json(e))).toEqual([]);
  });

  it('validates the inline examples against the schema', () => {
    const inline = [
      ...inlineExamples(DOC, '{"type": "allocation_recording"'),
      ...inlineExamples(DOC, '{"format"')
    ];
    expect(inline.length).toBeGreaterThan(1);
    for (const text of inline) {
      expect(schemaErrors(text, JSON.parse(substitute(text)))).toEqual([]);
    }
  });

  it('finds what the schema does not allow', () => {
    // A renamed key and a wrong type must fail, which shows that the
    // validation above is not vacuous.
    const sample = '{"type": "sample", "seq": "1"}';
    expect(schemaErrors(sample, JSON.parse(sample))).not.toEqual([]);
    const snapshot = '{"host": {"rss": 1}, "gpus": []}';
    expect(schemaErrors(snapshot, JSON.parse(snapshot))).not.toEqual([]);
  });

  it('shows every kind of message and result at least once', () => {
    const kinds = new Set(ALL.map(read));
    for (const kind of [
      'open',
      'hello',
      'sample',
      'cells',
      'reply',
      'error',
      'cell_alive',
      'timeline',
      'CellMemoryRecord',
      'OomDiagnosis',
      'Snapshot',
      'FreeMemoryResult',
      'InspectResult',
      'DeleteResult',
      'NotebookNames',
      'RecordingState',
      'AllocationSites',
      'ProcessTree',
      'CellProcessTree',
      'StopProcessResult',
      'ReleaseEngineResult',
      'cluster',
      'ClusterActionResult',
      'CellCluster'
    ]) {
      expect(kinds).toContain(kind);
    }
  });

  it('reads the inline allocation_recording broadcast', () => {
    const found = inlineExamples(DOC, '{"type": "allocation_recording"');
    expect(found.length).toBeGreaterThan(0);
    for (const text of found) {
      expect(read({ line: 0, text })).toBe('allocation_recording');
    }
  });

  it('reads the inline allocation_snapshot result', () => {
    const found = inlineExamples(DOC, '{"format"');
    expect(found.length).toBe(1);
    const value = JSON.parse(found[0]);
    expect(
      expectValue(parseAllocationSnapshot(value), 'allocation_snapshot')
    ).toEqual(value);
  });

  it('names every request type of the frontend in the request table', () => {
    for (const type of Object.keys(REQUEST_TYPES)) {
      expect(DOC).toContain(`| \`${type}\` |`);
    }
  });
});
