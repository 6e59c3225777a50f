/**
 * Hostile YAML: nesting and alias expansion are bounded before any work proportional to them is
 * done, and refused with an INVALID_INPUT CharmsError.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { parseYaml } from './yaml.js';
import { CharmsError } from '../errors.js';

const refused = (re: RegExp) => (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT' && re.test(e.message);

const deep = {
  flow: (n: number) => '['.repeat(n) + ']'.repeat(n),
  flowMap: (n: number) => '{a: '.repeat(n) + '1' + '}'.repeat(n),
  compact: (n: number) => '- '.repeat(n) + 'x',
  block: (n: number) => Array.from({ length: n }, (_, i) => ' '.repeat(i) + 'k:').join('\n') + ' 1',
};

test('deeply nested YAML is refused as a recursion limit, in flow, compact and block styles', () => {
  for (const [name, make] of Object.entries(deep))
    for (const n of [200, 5_000, 50_000]) {
      if (name === 'block' && n > 5_000) continue; // the text grows as n²
      assert.throws(() => parseYaml(make(n)), refused(/recursion limit exceeded/), `${name} ${n}`);
    }
  assert.equal((parseYaml(deep.flow(100)) as unknown[]).length, 1);
});

test('parsing deeply nested YAML twice in one process does not abort Node (child process)', () => {
  const yamlModule = new URL('./yaml.js', import.meta.url).href;
  const script = `
    import { parseYaml } from ${JSON.stringify(yamlModule)};
    const text = '['.repeat(1000) + ']'.repeat(1000);
    for (let i = 0; i < 3; i++) {
      try { parseYaml(text); console.log('accepted'); }
      catch (e) { console.log(e.constructor.name + ' ' + e.code); }
    }`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `child exited with ${r.status} ${r.signal ?? ''}: ${r.stderr.slice(0, 400)}`);
  assert.deepEqual(r.stdout.trim().split('\n'), ['CharmsError INVALID_INPUT', 'CharmsError INVALID_INPUT', 'CharmsError INVALID_INPUT']);
});

test('billion laughs: alias expansion is bounded (count and expanded size)', () => {
  const lines = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i <= 9; i++)
    lines.push(
      `a${i}: &a${i} [${Array(10)
        .fill(`*a${i - 1}`)
        .join(', ')}]`,
    );
  const laughs = lines.join('\n');
  assert.ok(laughs.length < 800);
  assert.throws(() => parseYaml(laughs), refused(/alias/));
  // few aliases, each expanding a large node: the expanded size is what is bounded
  const big = `a: &a [${Array(2000).fill('1').join(', ')}]\nb: [${Array(200).fill('*a').join(', ')}]`;
  assert.throws(() => parseYaml(big), refused(/alias/));
  // ordinary use of aliases still works
  const ok = parseYaml('base: &b {x: 1}\nuse: [*b, *b]') as { entries: [unknown, unknown][] };
  assert.equal(ok.entries.length, 2);
});

test('10 000 aliases of a small map: each alias found without walking the document again (linear), limits kept', async () => {
  const { Alias } = await import('yaml');
  const { ValueMap } = await import('./value.js');
  // `Alias.resolve` walks the document from its start for every alias: n aliases, n² node visits
  const resolve = Alias.prototype.resolve;
  let resolves = 0;
  Alias.prototype.resolve = function (this: InstanceType<typeof Alias>, ...a: Parameters<typeof resolve>) {
    resolves++;
    return resolve.apply(this, a);
  };
  try {
    const n = 10_000;
    const text = `base: &b {x: 1, y: 2}\nlist:\n${'- *b\n'.repeat(n)}`;
    const v = parseYaml(text) as InstanceType<typeof ValueMap>;
    const list = v.get('list') as InstanceType<typeof ValueMap>[];
    assert.equal(list.length, n);
    assert.equal(list[n - 1]!.get('y'), 2n);
    assert.equal(resolves, 0, 'no per-alias walk of the document');
    // an anchor defined again: each alias takes the definition before it
    const redefined = parseYaml('a: &x 1\nb: *x\nc: &x 2\nd: *x\n') as InstanceType<typeof ValueMap>;
    assert.deepEqual([redefined.get('b'), redefined.get('d')], [1n, 2n]);
    // the expansion bound still holds
    assert.throws(() => parseYaml(`base: &b {x: 1, y: 2}\nlist:\n${'- *b\n'.repeat(30_000)}`), refused(/aliases expand to more than 100000 values/));
  } finally {
    Alias.prototype.resolve = resolve;
  }
});
