import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';

/** The verification library must not import Node built-ins (it ships in wallet browser bundles). */
test('charms-ts/verify imports no node: modules, transitively', () => {
  const root = dirname(fileURLToPath(import.meta.url)); // dist/verify
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const src = readFileSync(file, 'utf8');
    assert.ok(!/\bBuffer\b|\bprocess\./.test(src), `${file} uses a Node global`);
    for (const m of src.matchAll(/(?:import|export)[^'"]*from\s*['"]([^'"]+)['"]/g)) {
      const spec = m[1]!;
      assert.ok(!spec.startsWith('node:'), `${file} imports ${spec}`);
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
    }
  };
  visit(join(root, 'index.js'));
  assert.ok(seen.size > 10);
});
