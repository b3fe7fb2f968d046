#!/usr/bin/env node
/**
 * Packs the kernel helper (python_helper/jupyterlab_vram_helper) into the code
 * the frontend executes in each kernel, so that the frontend always delivers
 * the helper that speaks its protocol version, even to a kernel whose
 * environment lacks our Python package.
 *
 * The helper travels compact: docstrings and comments stripped, each line kept
 * at its number (scripts/compact_python.py, run with $PYTHON or python3), then
 * zlib-compressed and base64-encoded; the kernel inflates it with its standard
 * library. The frontend loads that code in a chunk of its own, only when a
 * Python kernel needs it.
 *
 *   node scripts/bundle-helper.mjs           writes src/kernel/helperBundle.generated.ts
 *   node scripts/bundle-helper.mjs --stdout  prints the bootstrap code (used by the
 *                                            Python end-to-end tests, so they
 *                                            bootstrap exactly as the frontend does)
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
  mkdirSync
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const helperDir = join(root, 'python_helper', 'jupyterlab_vram_helper');
const loaderPath = join(root, 'python_helper', 'kernel_bootstrap.py');
const outPath = join(root, 'src', 'kernel', 'helperBundle.generated.ts');

// The message shapes, for type checkers only: every module imports them under
// `if TYPE_CHECKING:`, so a kernel never runs them, and they would add ~11 kB
// to every bootstrap. A run-time import of one fails the end-to-end tests.
const TYPES_ONLY = new Set(['protocol_types.py', 'protocol_generated.py']);

function pythonFiles(dir) {
  return readdirSync(dir)
    .sort()
    .flatMap(name => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) {
        return name === '__pycache__' ? [] : pythonFiles(path);
      }
      return name.endsWith('.py') && !TYPES_ONLY.has(name) ? [path] : [];
    });
}

/** {name: source} -> {name: source without docstrings and comments, lines in place}. */
function compactPython(sources) {
  const python = process.env.PYTHON || 'python3';
  const run = spawnSync(python, [join(root, 'scripts', 'compact_python.py')], {
    input: JSON.stringify(sources),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024
  });
  if (run.error || run.status !== 0) {
    throw new Error(
      `${python} scripts/compact_python.py failed: ${run.error ?? run.stderr}`
    );
  }
  return JSON.parse(run.stdout);
}

/**
 * The bundle as the kernel reads it (see kernel_bootstrap.py): the modules'
 * sources one after the other, and a table of each module's slice of that
 * text in code points, as Python indexes a str. The kernel parses only the
 * table, and inflates the sources only when it needs one (a module not in
 * its code cache, or a traceback's lines).
 */
function bundleParts(modules) {
  const table = {};
  const parts = [];
  let at = 0;
  for (const [name, { source, package: isPackage }] of Object.entries(
    modules
  )) {
    const length = [...source].length;
    table[name] = { package: isPackage, start: at, end: at + length };
    parts.push(source);
    at += length;
  }
  return { table, text: parts.join('') };
}

/** zlib, then base64: what the kernel reverses with zlib.decompress(base64.b64decode(...)). */
function packed(text) {
  return deflateSync(Buffer.from(text, 'utf8'), { level: 9 }).toString(
    'base64'
  );
}

const sources = { '<loader>': readFileSync(loaderPath, 'utf8') };
const isPackage = {};
for (const path of pythonFiles(helperDir)) {
  const parts = relative(join(root, 'python_helper'), path)
    .slice(0, -3)
    .split(sep);
  const packageInit = parts[parts.length - 1] === '__init__';
  if (packageInit) {
    parts.pop();
  }
  sources[parts.join('.')] = readFileSync(path, 'utf8');
  isPackage[parts.join('.')] = packageInit;
}
const compact = compactPython(sources);
const modules = {};
for (const name of Object.keys(isPackage)) {
  modules[name] = { source: compact[name], package: isPackage[name] };
}

const hash = createHash('sha256')
  .update(JSON.stringify(modules))
  .digest('hex')
  .slice(0, 16);
const { table, text } = bundleParts(modules);

// One statement, evaluated in a private globals dict: nothing leaks into the
// user's namespace, and the execution result is None (no Out[] entry).
const bootstrapCode =
  'exec(compile(__import__("zlib").decompress(__import__("base64").b64decode("' +
  packed(compact['<loader>']) +
  '")).decode("utf-8"), "<jupyterlab-vram bootstrap>", "exec"), ' +
  '{"__name__": "__jupyterlab_vram_bootstrap__", "BUNDLE_HASH": ' +
  JSON.stringify(hash) +
  ', "BUNDLE_MODULES": ' +
  JSON.stringify(JSON.stringify(table)) +
  ', "BUNDLE_Z64": "' +
  packed(text) +
  '"})\n';

if (process.argv.includes('--stdout')) {
  process.stdout.write(bootstrapCode);
} else {
  mkdirSync(dirname(outPath), { recursive: true });
  writeFileSync(
    outPath,
    [
      '// Generated by scripts/bundle-helper.mjs from python_helper/. Do not edit.',
      '// Imported lazily (src/kernel/helperCode.ts): its own chunk, loaded when a Python kernel needs it.',
      `export const HELPER_BOOTSTRAP_CODE = ${JSON.stringify(bootstrapCode)};`,
      ''
    ].join('\n')
  );
  console.log(
    `bundled ${Object.keys(modules).length} helper modules (${hash}): ` +
      `${bootstrapCode.length} characters of bootstrap code in ${relative(root, outPath)}`
  );
}
