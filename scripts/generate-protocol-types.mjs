#!/usr/bin/env node
/**
 * Generates the wire types of the comm protocol from its one JSON Schema,
 * protocol/protocol.schema.json, so that the frontend and the kernel
 * helper cannot disagree on a message's shape:
 *
 *   - src/protocol/protocol.generated.ts: TypeScript interfaces, by
 *     json-schema-to-typescript, formatted with the project's Prettier config;
 *   - python_helper/jupyterlab_vram_helper/protocol_generated.py: TypedDicts,
 *     by datamodel-code-generator (run with $PYTHON, else `python`), formatted
 *     with ruff as the project configures it.
 *
 *   node scripts/generate-protocol-types.mjs          writes both files
 *   node scripts/generate-protocol-types.mjs --check  writes nothing; exits 1
 *                                                     when a committed file
 *                                                     differs from what the
 *                                                     schema gives
 *
 * The Python file must run in any kernel without dependencies, on Python 3.10
 * and later: the generator imports NotRequired from typing_extensions (typing
 * has it from 3.11 only), so that import is moved under TYPE_CHECKING, where
 * only type checkers read it. With `from __future__ import annotations` no
 * annotation is evaluated at run time, so the module imports `typing` alone.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile } from 'json-schema-to-typescript';
import prettier from 'prettier';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const schemaPath = join(root, 'protocol', 'protocol.schema.json');
const tsPath = join(root, 'src', 'protocol', 'protocol.generated.ts');
const pyPath = join(
  root,
  'python_helper',
  'jupyterlab_vram_helper',
  'protocol_generated.py'
);
const python = process.env.PYTHON || 'python';

const HEADER =
  'Generated from protocol/protocol.schema.json by ' +
  'scripts/generate-protocol-types.mjs: do not edit it, edit the schema and ' +
  'run `npm run build:schema`.';

/**
 * The TypeScript of every definition, and of the root as `ProtocolMessage`.
 *
 * json-schema-to-typescript emits the definitions no message reaches (the
 * results of the replies) only below a root that is an object, while ours is
 * a oneOf: it compiles a wrapper object whose definitions hold the root too,
 * then drops the wrapper's own empty interface and the note it appends to
 * each such definition's comment.
 */
async function typescript(schema) {
  const { oneOf, description, definitions, ...rest } = schema;
  const wrapper = {
    ...rest,
    title: 'ProtocolDefinitions',
    type: 'object',
    additionalProperties: false,
    properties: {},
    definitions: { ProtocolMessage: { description, oneOf }, ...definitions }
  };
  const compiled = await compile(wrapper, 'ProtocolDefinitions', {
    bannerComment: `/**\n * ${HEADER}\n */`,
    // Without it, each definition that no message references would be left out.
    unreachableDefinitions: true,
    // An object of the schema lists every key it allows; an index signature
    // appears only where the schema asks for one (additionalProperties).
    additionalProperties: false,
    // Bounded arrays stay arrays: tuples of every allowed length help no reader.
    maxItems: -1,
    format: false,
    cwd: dirname(schemaPath)
  });
  const text = compiled
    .replace(/^export interface ProtocolDefinitions \{\s*\}\n/m, '')
    .replace(
      / \* ?\n \* This interface was referenced by `ProtocolDefinitions`'s JSON-Schema\n \* via the `definition` "\w+"\.\n/g,
      ''
    )
    .replace(
      /\/\*\*\n \* This interface was referenced by `ProtocolDefinitions`'s JSON-Schema\n \* via the `definition` "\w+"\.\n \*\/\n/g,
      ''
    );
  if (text.includes('ProtocolDefinitions')) {
    throw new Error('could not drop the wrapper from the generated TypeScript');
  }
  const options = await prettier.resolveConfig(tsPath);
  return prettier.format(text, { ...options, filepath: tsPath });
}

function run(command, args, input) {
  const result = spawnSync(command, args, {
    cwd: root,
    input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024
  });
  if (result.error || result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed: ${result.error ?? result.stderr}`
    );
  }
  return result.stdout;
}

function pythonTypes() {
  const dir = mkdtempSync(join(tmpdir(), 'protocol-types-'));
  try {
    const out = join(dir, 'protocol_generated.py');
    run(python, [
      '-m',
      'datamodel_code_generator',
      '--input',
      schemaPath,
      '--input-file-type',
      'jsonschema',
      '--output',
      out,
      '--output-model-type',
      'typing.TypedDict',
      '--target-python-version',
      '3.10',
      '--use-union-operator',
      '--use-standard-collections',
      '--use-schema-description',
      '--use-field-description',
      '--enum-field-as-literal',
      'all',
      // A closed TypedDict needs typing_extensions at run time (PEP 728).
      '--no-use-closed-typed-dict',
      '--collapse-root-models',
      '--disable-timestamp',
      '--formatters',
      'builtin',
      '--custom-file-header',
      `"""${HEADER}"""`
    ]);
    return ruffFormat(dependencyFree(readFileSync(out, 'utf8')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Moves the typing_extensions import under TYPE_CHECKING (see the top of this file). */
function dependencyFree(text) {
  const extensions = /^from typing_extensions import (.+)\n/m;
  const match = text.match(extensions);
  if (!match) {
    return text;
  }
  const typing = /^from typing import (.+)\n/m;
  const names = text.match(typing)?.[1].split(', ') ?? [];
  const typingLine = `from typing import ${[...new Set(['TYPE_CHECKING', ...names])].sort().join(', ')}\n`;
  const guarded = `\nif TYPE_CHECKING:  # typing has NotRequired from Python 3.11 only\n    from typing_extensions import ${match[1]}\n`;
  const withoutExtensions = text.replace(extensions, '');
  const result = typing.test(withoutExtensions)
    ? withoutExtensions.replace(typing, typingLine + guarded)
    : withoutExtensions;
  if (/^(from|import) typing_extensions/m.test(result.replace(guarded, ''))) {
    throw new Error('protocol_generated.py still imports typing_extensions');
  }
  return result;
}

/** Formats with ruff, as `ruff format` and `ruff check --fix` would the file in place. */
function ruffFormat(text) {
  const fixed = run(
    python,
    [
      '-m',
      'ruff',
      'check',
      '--fix-only',
      '--exit-zero',
      '--quiet',
      '--stdin-filename',
      pyPath,
      '-'
    ],
    text
  );
  return run(
    python,
    ['-m', 'ruff', 'format', '--stdin-filename', pyPath, '-'],
    fixed
  );
}

const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));
const outputs = [
  [tsPath, await typescript(schema)],
  [pyPath, pythonTypes()]
];

if (process.argv.includes('--check')) {
  const stale = outputs.filter(([path, text]) => {
    let committed = '';
    try {
      committed = readFileSync(path, 'utf8');
    } catch {
      // a missing file is stale
    }
    return committed !== text;
  });
  for (const [path] of stale) {
    console.error(
      `${path.slice(root.length + 1)} differs from what ` +
        'protocol/protocol.schema.json gives: run `npm run build:schema` and commit the result.'
    );
  }
  if (stale.length) {
    process.exit(1);
  }
  console.log('The generated protocol types match the schema.');
} else {
  for (const [path, text] of outputs) {
    writeFileSync(path, text);
    console.log(`wrote ${path.slice(root.length + 1)}`);
  }
}
