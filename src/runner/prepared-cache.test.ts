/**
 * The on-disk cache of prepared modules: a hit runs exactly as a fresh preparation (same fuel),
 * entries are keyed by binary, budget and caps, and a damaged or foreign entry is never trusted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { fromHex } from '../util/bytes.js';
import { FUEL_VECTORS } from './fixtures/fuel-vectors.js';
import { prepareModule } from './prepare.js';
import { executeApp } from './execute.js';
import { preparedKey, readPrepared, writePrepared } from './prepared-cache.js';
import { lineLogger, silentLogger } from '../infra/log.js';
import { spawnSync } from 'node:child_process';

const loopSum = fromHex(FUEL_VECTORS[0]!.hex);
const LIMITS = { memoryPages: 2048, tableElements: 65_536 };
const FUEL = 1_000_000n;
const dirOf = () => mkdtempSync(join(tmpdir(), 'prepared-cache-'));
const run = (p: ReturnType<typeof prepareModule>) => executeApp({ module: p.module, meter: p.meter, stdin: new Uint8Array(0), fuelLimit: FUEL });

test('a fresh preparation is kept; the next one comes from the entry and runs with the same fuel', () => {
  const dir = dirOf();
  const fresh = prepareModule(loopSum, FUEL, LIMITS, dir, silentLogger);
  const files = readdirSync(dir);
  assert.deepEqual(files, [`${preparedKey(loopSum, FUEL, LIMITS)}.bin`]);
  const entry = readPrepared(dir, preparedKey(loopSum, FUEL, LIMITS));
  assert.ok(entry, 'the entry reads back');
  assert.deepEqual(entry.meter, fresh.meter);
  const again = prepareModule(loopSum, FUEL, LIMITS, dir, silentLogger);
  assert.deepEqual(run(again), run(fresh));
  assert.equal(run(again).cycles, 4310n);
  assert.deepEqual(readdirSync(dir), files, 'nothing new written on a hit');
});

test('keys differ by binary, fuel budget and caps', () => {
  const k = preparedKey(loopSum, FUEL, LIMITS);
  const other = Uint8Array.from(loopSum);
  other[other.length - 1]! ^= 1;
  assert.notEqual(preparedKey(other, FUEL, LIMITS), k);
  assert.notEqual(preparedKey(loopSum, FUEL + 1n, LIMITS), k);
  assert.notEqual(preparedKey(loopSum, FUEL, { ...LIMITS, memoryPages: 16 }), k);
  assert.notEqual(preparedKey(loopSum, FUEL, { ...LIMITS, tableElements: 1 }), k);
  assert.equal(preparedKey(loopSum, FUEL, { ...LIMITS }), k);
});

test('a damaged, truncated or foreign entry is ignored and rewritten, never run', () => {
  const dir = dirOf();
  const key = preparedKey(loopSum, FUEL, LIMITS);
  const file = join(dir, `${key}.bin`);
  prepareModule(loopSum, FUEL, LIMITS, dir, silentLogger);
  const good = readFileSync(file);
  const damaged = Buffer.from(good);
  damaged[damaged.length - 5]! ^= 0x40; // inside the instrumented code
  const variants: [string, Buffer][] = [
    ['a flipped bit', damaged],
    ['truncated', good.subarray(0, good.length - 10)],
    ['only the header', good.subarray(0, 40)],
    ['empty', Buffer.alloc(0)],
    ['not an entry', Buffer.from('hello')],
  ];
  for (const [name, bytes] of variants) {
    writeFileSync(file, bytes);
    assert.equal(readPrepared(dir, key), undefined, name);
    const p = prepareModule(loopSum, FUEL, LIMITS, dir, silentLogger);
    assert.equal(run(p).cycles, 4310n, name);
    assert.deepEqual(readFileSync(file), good, `${name}: rewritten`);
  }
  // an intact entry of another key, copied under this key, fails its checksum
  const otherKey = preparedKey(loopSum, FUEL + 1n, LIMITS);
  writePrepared(dir, otherKey, { bytes: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]), meter: { fuel: 'f', trap: 't', depth: 'd' } }, silentLogger);
  writeFileSync(file, readFileSync(join(dir, `${otherKey}.bin`)));
  assert.equal(readPrepared(dir, key), undefined);
});

test('concurrent writers of one entry leave one intact entry and no temporary files', async () => {
  const dir = dirOf();
  const prepUrl = new URL('./prepare.js', import.meta.url).href;
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    (async () => {
      const { prepareModule } = await import(${JSON.stringify(prepUrl)});
      for (let i = 0; i < 20; i++) prepareModule(new Uint8Array(workerData.wasm), ${FUEL}n, ${JSON.stringify(LIMITS)}, workerData.dir);
      parentPort.postMessage('done');
    })();`;
  await Promise.all(
    [0, 1, 2, 3].map(
      () =>
        new Promise<void>((resolve, reject) => {
          const w = new Worker(code, { eval: true, workerData: { wasm: Array.from(loopSum), dir } });
          w.once('message', () => void w.terminate().then(() => resolve()));
          w.once('error', reject);
        }),
    ),
  );
  const files = readdirSync(dir);
  assert.deepEqual(files, [`${preparedKey(loopSum, FUEL, LIMITS)}.bin`]);
  assert.ok(readPrepared(dir, preparedKey(loopSum, FUEL, LIMITS)));
});

test('a cache under /proc is skipped at once (Node 20 recursive mkdir spins there), with one warning', () => {
  // in a child: before the fix the write never returned (100 % CPU), so a bounded spawn proves it
  const mod = new URL('./prepared-cache.js', import.meta.url).href;
  const script = `
    const m = await import(${JSON.stringify(mod)});
    const warnings = [];
    const log = { error() {}, warn: (w) => warnings.push(w), info() {}, debug() {}, warnAlways() {} };
    const entry = { bytes: new Uint8Array(10), meter: { fuel: 'f', trap: 't', depth: 'd' } };
    m.writePrepared('/proc/charms-ts-test/apps', 'k1', entry, log);
    m.writePrepared('/proc/charms-ts-test/apps', 'k2', entry, log);
    process.stdout.write(JSON.stringify(warnings));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { timeout: 30_000, encoding: 'utf8' });
  assert.equal(r.signal, null, 'the write returned instead of spinning');
  assert.equal(r.status, 0, r.stderr);
  const warnings = JSON.parse(r.stdout) as string[];
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /app cache \/proc\/charms-ts-test\/apps cannot be written \(ENOENT\)/);
});

test('a cache below a regular file (~/.cache a file): the module still prepares and runs, one warning', () => {
  const home = dirOf();
  writeFileSync(join(home, '.cache'), 'not a directory');
  const dir = join(home, '.cache', 'charms-ts', 'apps');
  const lines: string[] = [];
  const log = lineLogger((l) => lines.push(l));
  const p = prepareModule(loopSum, FUEL, LIMITS, dir, log);
  assert.equal(run(p).cycles, 4310n);
  const again = prepareModule(loopSum, FUEL + 1n, LIMITS, dir, log);
  assert.ok(again.module);
  assert.equal(lines.length, 1, lines.join(''));
  assert.match(lines[0]!, /^warning: the app cache .* cannot be written \(ENOTDIR\)/);
});
