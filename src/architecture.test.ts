/**
 * The layer rule of README "Architecture", checked on the source: walks every import in `src/`
 * (static, `export … from`, `import type`, dynamic `import()`) and fails on an import that points
 * to a higher layer or sideways to another folder of the same layer, on production code that
 * imports test code, and on any file cycle.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { skipOrFail } from './testing/require.js';

/**
 * The layers, lowest first (the one place this order is written in code; README "Architecture"
 * lists the same). A module may import its own folder and folders of lower layers only. Folders
 * sharing a layer are independent of each other.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['errors'], // src/errors.ts: CharmsError, the codes and their HTTP statuses
  ['util'], // bytes
  ['codec', 'settings'], // CBOR, JSON, YAML; the settings loader (environment and flags)
  ['model', 'infra'], // the data model (spell, request, CLI inputs); HTTP transport, logger, response cache
  ['groth16', 'keys'], // Groth16 / mock proof checking, spell decoding + proof check; app keys
  ['bitcoin', 'cardano'], // each chain: tx codec, addresses, spell extraction, builder
  ['chains'], // chain dispatch (detect a tx's chain, dest addresses)
  ['verify', 'sources'], // the browser-safe read side: dispatch to a chain's extractor; chain sources (node, Esplora)
  ['runner', 'scrolls'], // the WASM app runner; the Scrolls canister client
  ['checker'], // the spell checker
  ['prover'], // proof backends, the prove pipeline, the remote-prover client
  ['prove-server'], // the proving server (`charms server`)
  ['query'], // the spell-query service
  ['indexer'], // the charms index: store (SQLite/PostgreSQL), chain follower, mempool overlay, API
  ['app'], // app project scaffolding and builds
  ['cli'], // the charms / charms-prover commands
  ['index'], // src/index.ts: the package's public API
];

/** Test-only code: may import anything; production code may not import it. */
const isTestCode = (f: string): boolean => f.endsWith('.test.ts') || /^(testing|bench)\//.test(f) || f.split('/').includes('fixtures');

const here = dirname(fileURLToPath(import.meta.url)); // dist/ when run by `npm test`
const srcDir = [resolve(here, '../src'), resolve(here)].find((d) => existsSync(join(d, 'errors.ts')));

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [join(dir, e.name)] : [],
  );
}

/** Folder (or root module name) a src-relative path belongs to. */
const unitOf = (f: string): string => (f.includes('/') ? f.slice(0, f.indexOf('/')) : f.replace(/\.ts$/, ''));

function graph(root: string): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const abs of walk(root)) {
    const from = relative(root, abs).split(sep).join('/');
    const imports = ts
      .preProcessFile(readFileSync(abs, 'utf8'), true, true)
      .importedFiles.map((i) => i.fileName)
      .filter((s) => s.startsWith('.'))
      .map((s) =>
        relative(root, resolve(dirname(abs), s))
          .split(sep)
          .join('/')
          .replace(/\.js$/, '.ts'),
      );
    g.set(from, imports);
  }
  return g;
}

test('imports point down the layers, never up or sideways, and production code never imports tests', (t) => {
  if (srcDir === undefined) return skipOrFail(t, 'src/ not found next to dist/');
  const layerOf = new Map<string, number>();
  LAYERS.forEach((units, i) => units.forEach((u) => layerOf.set(u, i)));
  const bad: string[] = [];
  for (const [from, imports] of graph(srcDir)) {
    const u = unitOf(from);
    const l = layerOf.get(u);
    if (l === undefined && !isTestCode(from)) {
      bad.push(`${from}: folder "${u}" is in no layer (add it to LAYERS and README "Architecture")`);
      continue;
    }
    for (const to of imports) {
      if (isTestCode(to)) {
        if (!isTestCode(from)) bad.push(`${from} imports test code ${to}`);
        continue;
      }
      if (isTestCode(from)) continue;
      const v = unitOf(to);
      const m = layerOf.get(v);
      if (v === u) continue;
      if (m === undefined || l === undefined || m >= l) bad.push(`${from} (layer ${l} ${u}) imports ${to} (layer ${m ?? '?'} ${v})`);
    }
  }
  assert.deepEqual(bad, []);
});

test('no import cycle between files', (t) => {
  if (srcDir === undefined) return skipOrFail(t, 'src/ not found next to dist/');
  const g = graph(srcDir);
  const state = new Map<string, 1 | 2>(); // 1 on the stack, 2 done
  const cycles: string[] = [];
  const visit = (f: string, stack: string[]): void => {
    state.set(f, 1);
    for (const to of g.get(f) ?? []) {
      if (!g.has(to)) continue;
      if (state.get(to) === 1) cycles.push([...stack.slice(stack.indexOf(to)), f, to].join(' → '));
      else if (state.get(to) === undefined) visit(to, [...stack, f]);
    }
    state.set(f, 2);
  };
  for (const f of g.keys()) if (state.get(f) === undefined) visit(f, []);
  assert.deepEqual(cycles, []);
});

test('the README lists the same layers, in the same order', (t) => {
  const readme = srcDir === undefined ? undefined : join(srcDir, '../README.md');
  if (readme === undefined || !existsSync(readme)) return skipOrFail(t, 'README.md not found');
  const text = readFileSync(readme, 'utf8');
  const section = text.slice(text.indexOf('## Architecture'));
  const rows = [...section.matchAll(/^\| (\d+) \| ([^|]+) \|/gm)].map((m) => [...m[2]!.matchAll(/`([a-z0-9-]+)\/?(?:\.ts)?`/g)].map((x) => x[1]));
  assert.deepEqual(
    rows,
    LAYERS.map((l) => [...l]),
  );
});
