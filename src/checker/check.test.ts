import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSpell, type RunApp } from './check.js';
import { parseSpellText } from '../model/inputs.js';
import { utxoIdFromString } from '../model/primitives.js';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { funding } from '../testing/fixtures.js';
import { CharmsError } from '../errors.js';
import { decodeCbor } from '../codec/cbor.js';
import { ValueMap } from '../codec/value.js';

const noRun: RunApp = async () => {
  throw new Error('no app should run');
};

test('spell rules are named: version, token amounts, app indexes, inputs, beaming finality', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = funding(readSharedText);
  const app = `t/${'11'.repeat(32)}/${'22'.repeat(32)}`;
  const base = (tx: string, version = 15) => parseSpellText(`version: ${version}\ntx:\n${tx}\napp_public_inputs:\n  ${app}: ~\n`);
  const coin = `{amount: 1000, dest: ${f.dest}}`;
  const args = (spell: ReturnType<typeof parseSpellText>, extra: Partial<Parameters<typeof checkSpell>[0]> = {}) => ({
    spell,
    prevTxs: [{ chain: 'bitcoin' as const, hex: f.hex }],
    privateInputs: [],
    beamedFrom: new Map(),
    binaries: new Map(),
    appSignatures: [],
    chain: 'bitcoin' as const,
    mock: false,
    runApp: noRun,
    ...extra,
  });
  const expectRule = async (a: ReturnType<typeof args>, re: RegExp) =>
    assert.rejects(checkSpell(a), (e: unknown) => e instanceof CharmsError && re.test(e.message), String(re));
  await expectRule(args(base(`  ins: [${f.txid}:0]\n  outs: [{}]\n  coins: [${coin}]`, 14)), /version 14 is not the current protocol version 15/);
  await expectRule(args(base(`  ins: [${f.txid}:0]\n  outs: [{0: 0}]\n  coins: [${coin}]`)), /zero output amount for app t\//);
  await expectRule(args(base(`  ins: [${f.txid}:0]\n  outs: [{3: 5}]\n  coins: [${coin}]`)), /refers to app index 3/);
  await expectRule(args(base(`  ins: [${f.txid}:7]\n  outs: [{}]\n  coins: [${coin}]`)), /input .*:7 is not created by the given prev_txs/);
  await expectRule(args(base(`  ins: [${f.txid}:0, ${f.txid}:0]\n  outs: [{}]\n  coins: [${coin}]`)), /duplicate UTXO/);
  await expectRule(args(base(`  ins: [${f.txid}:0]\n  outs: [{}, {}]\n  coins: [${coin}]`)), /coins length \(1\) must match outs length \(2\)/);
  await expectRule(args(base(`  ins: [${f.txid}:0]\n  outs: [{0: 5}]\n  coins: [${coin}]`)), /not a simple transfer for: \[t\//);
  // a beamed input whose source transaction carries no finality proof
  const other = readSharedText('vectors', 'chain', '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36.bitcoin.hex').trim();
  await expectRule(
    args(base(`  ins: [${f.txid}:0]\n  outs: [{}]\n  coins: [${coin}]`), {
      prevTxs: [{ chain: 'bitcoin', hex: f.hex }, { chain: 'bitcoin', hex: other }],
      beamedFrom: new Map([[0, { utxo: utxoIdFromString('4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36:0') }]]),
    }),
    /needs a valid finality proof/,
  );
  // a plain transfer of nothing: accepted, no app runs
  const ok = await checkSpell(args(base(`  ins: [${f.txid}:0]\n  outs: [{}]\n  coins: [${coin}]`)));
  assert.deepEqual(ok.cycles, [0n]);
});

test('apps receive the reference stdin tuple (app, tx, x, w)', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = funding(readSharedText);
  const { sha256 } = await import('@noble/hashes/sha2.js');
  const wasm = new TextEncoder().encode('not really wasm');
  const vk = Buffer.from(sha256(wasm)).toString('hex');
  const app = `n/${'11'.repeat(32)}/${vk}`;
  let stdin: Uint8Array | undefined;
  const spy: RunApp = async (a) => ((stdin = a.stdin), { ok: true, cycles: 42n, stderr: '' });
  const spell = parseSpellText(`version: 15\ntx:\n  ins: [${f.txid}:0]\n  outs: [{0: {name: x}}]\n  coins: [{amount: 1000, dest: ${f.dest}}]\napp_public_inputs:\n  ${app}: 7\n`);
  const r = await checkSpell({ spell, prevTxs: [{ chain: 'bitcoin', hex: f.hex }], privateInputs: [], beamedFrom: new Map(), binaries: new Map([[vk, wasm]]), appSignatures: [], chain: 'bitcoin', mock: false, runApp: spy });
  assert.deepEqual(r.cycles, [42n]);
  const tuple = decodeCbor(stdin!) as unknown[];
  assert.equal(tuple.length, 4);
  assert.equal((tuple[0] as unknown[])[0], 'n');
  const tx = tuple[1] as ValueMap;
  assert.deepEqual(tx.entries.map(([k]) => k), ['ins', 'refs', 'outs', 'coin_ins', 'coin_outs', 'prev_txs', 'app_public_inputs']);
  assert.ok((tx.get('ins') as unknown[])[0] instanceof Array);
  assert.equal(tuple[2], 7n);
  assert.equal(tuple[3], null);
});
