/**
 * The spell checker against real prerequisite transactions from the vectors: a BRO token transfer
 * spending outputs of the real v12 transaction 28355906…, mints from a plain payment, versioned
 * apps, and the exact stdin handed to apps (fake runner), plus a real WAT app on the real runner.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { sha256 } from '@noble/hashes/sha2.js';
import { CharmsError } from '../errors.js';
import { decodeCbor, encodeCbor } from '../codec/cbor.js';
import { ValueMap, type Value } from '../codec/value.js';
import { fromHex, toHex, utf8 } from '../util/bytes.js';
import { appFromString, appToString, txidFromDisplay, utxoIdFromString, utxoIdToBytes, type App, type B32, type Data } from '../model/primitives.js';
import type { NativeOutput, NormalizedSpell } from '../model/spell.js';
import { bareSpellInputs, type ChainTx } from '../model/request.js';
import { appKeyFromSecret, signBinary } from '../keys/app-key.js';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { runApp as realRunApp, shutdownRunner } from '../runner/index.js';
import { checkSpell, utxoHashWithNonce, validateProveRequestShape, wellFormed, type CheckArgs, type RunApp, type RunResult } from './check.js';
import { prevSpells, charmsInUtxo, type PrevSpell } from './prev-spells.js';
import { isSimpleTransfer, sumTokenAmount } from './transfer.js';
import { appTransaction, type AppTransaction } from './app-input.js';
import { parseSpellText } from '../model/inputs.js';
import { funding } from '../testing/fixtures.js';

after(() => shutdownRunner());

const V12 = '283559062cb6b651eb4a5f557ba4f67efa9aae55ba2278d4f10f35cbefaa84a5'; // outs 0, 3: BRO 116e9 and 942e8
const PLAIN = '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36'; // no spell
const CARDANO_PLAIN = '974cd8137ec7bd73cebcd27d3c532db11b532a803731d236d36b75870130381e'; // no spell
const BRO = appFromString(
  't/3d7fe7e4cea6121947af73d70e5119bebd8aa5b7edfe74bfaf6e779a1847bd9b/c975d4e0c292fb95efbda5c13312d6ac1d8b5aeff7f0f1e5578645a2da70ff5f',
);
const DEST = fromHex('00144f01bcd75f71938618c6d617ace82114542cbb76');

const chainTx = (txid: string, chain: 'bitcoin' | 'cardano' = 'bitcoin'): ChainTx => ({
  chain,
  hex: readSharedText('vectors', 'chain', `${txid}.${chain}.hex`).trim(),
});
const u = (s: string) => utxoIdFromString(s);
const coin = (amount = 1000n): NativeOutput => ({ amount, dest: DEST });

function spellOf(p: {
  ins: string[];
  outs: [number, Data][][];
  apps: [App, Data][];
  refs?: string[];
  version?: number;
  versioned?: NormalizedSpell['versioned_apps'];
  scrolls?: number[];
}): NormalizedSpell {
  const s: NormalizedSpell = {
    version: p.version ?? 15,
    tx: { ins: p.ins.map(u), outs: p.outs.map((o) => new Map(o)), coins: p.outs.map(() => coin()) },
    app_public_inputs: p.apps,
    versioned_apps: p.versioned ?? [],
    mock: false,
  };
  if (p.refs) s.tx.refs = p.refs.map(u);
  if (p.scrolls) s.tx.scrolls = p.scrolls;
  return s;
}

const neverRun: RunApp = async () => {
  throw new Error('no app should run');
};

function args(spell: NormalizedSpell, prevTxs: ChainTx[], more: Partial<CheckArgs> = {}): CheckArgs {
  return {
    ...bareSpellInputs(spell, prevTxs, 'bitcoin'),
    mock: false,
    runApp: neverRun,
    ...more,
  };
}

const rejects = (p: Promise<unknown>, code: string, re: RegExp) =>
  assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof CharmsError, `expected a CharmsError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, re);
    return true;
  });

/** A fake runner recording each call; answers with `reply`. */
function recorder(reply: Partial<RunResult> = {}) {
  const calls: { wasm: Uint8Array; stdin: Uint8Array; expectedVersion?: number }[] = [];
  const run: RunApp = async (a) => {
    calls.push(a);
    return { ok: true, cycles: 123n, stderr: '', ...reply };
  };
  return { calls, run };
}

// A fake "binary": any bytes will do for the fake runner; the app's vk is its SHA-256.
const FAKE_WASM = utf8('\0asm fake app binary for the checker tests');
const tokenApp = (tag = 't', wasm = FAKE_WASM): App => ({ tag, identity: sha256(utf8('identity')), vk: sha256(wasm) });

test('prev spells: the real v12 tx yields its BRO charms and all its outputs as coins; a plain tx an empty spell', (t) => {
  if (!sharedOrSkip(t)) return;
  const next = spellOf({ ins: [], outs: [], apps: [] });
  const prev = prevSpells([chainTx(V12), chainTx(PLAIN)], next, false);
  const v12 = prev.get(toHex(txidFromDisplay(V12)))!;
  assert.equal(v12.verified, true);
  assert.deepEqual(
    charmsInUtxo(v12.spell, 0)?.map(([a, d]) => [appToString(a), d]),
    [[appToString(BRO), 11600000000n]],
  );
  assert.deepEqual(
    charmsInUtxo(v12.spell, 3)?.map(([, d]) => d),
    [94200000000n],
  );
  assert.equal(charmsInUtxo(v12.spell, 1), undefined);
  assert.equal(v12.spell.tx.coins!.length, v12.numOuts, 'coins = all outputs, the OP_RETURN and change included');
  assert.ok(v12.numOuts > v12.spell.tx.outs.length);
  const plain = prev.get(toHex(txidFromDisplay(PLAIN)))!;
  assert.equal(plain.verified, false);
  assert.equal(plain.spell.version, 15);
  assert.deepEqual(plain.spell.tx.outs, []);
  assert.ok(plain.spell.tx.ins!.length > 0);
  assert.equal(plain.spell.tx.coins!.length, plain.numOuts);
});

test('simple transfer of real BRO tokens is accepted without binaries; no contract runs', async (t) => {
  if (!sharedOrSkip(t)) return;
  const spell = spellOf({ ins: [`${V12}:0`, `${V12}:3`], outs: [[[0, 100000000000n]], [[0, 5800000000n]]], apps: [[BRO, null]] });
  const r = await checkSpell(args(spell, [chainTx(V12)]));
  assert.deepEqual(r.cycles, [0n]);
  assert.deepEqual(r.notices, [`➡️  simple transfer w.r.t. app: ${appToString(BRO)}`]);
  assert.equal(r.scrollsBound, true);
});

test('creating tokens from nothing is not a simple transfer: rejected without binaries, naming the app', async (t) => {
  if (!sharedOrSkip(t)) return;
  const spell = spellOf({ ins: [`${V12}:0`, `${V12}:3`], outs: [[[0, 105800000001n]]], apps: [[BRO, null]] });
  await rejects(
    checkSpell(args(spell, [chainTx(V12)])),
    'INVALID_SPELL',
    /^binaries must contain exactly the required app binaries\. Required binary hashes: \{c975d4e0\w*\} Provided binary hashes: \{\}: no app binaries were provided, but the spell is not a simple transfer for: \[t\/3d7fe7e4/,
  );
  // with some other binary supplied, the set comparison names the missing hash
  await rejects(
    checkSpell(args(spell, [chainTx(V12)], { binaries: [[sha256(FAKE_WASM), FAKE_WASM]] })),
    'INVALID_SPELL',
    /binaries must contain exactly the required app binaries\. Required binary hashes: \{c975d4e0.*\} Provided binary hashes: \{/,
  );
});

test('well-formedness: dangling app index, zero amount, wrong version, duplicate and unknown inputs', async (t) => {
  if (!sharedOrSkip(t)) return;
  const prev = [chainTx(V12)];
  const ins = [`${V12}:0`, `${V12}:3`];
  await rejects(
    checkSpell(args(spellOf({ ins, outs: [[[0, 105800000000n]], [[1, 5n]]], apps: [[BRO, null]] }), prev)),
    'INVALID_SPELL',
    /refers to app index 1, but the spell has 1 app/,
  );
  await rejects(
    checkSpell(args(spellOf({ ins, outs: [[[0, 105800000000n]], [[0, 0n]]], apps: [[BRO, null]] }), prev)),
    'INVALID_SPELL',
    /zero output amount for app t\/3d7fe7e4.*tx\.outs\[1\]/,
  );
  // a non-integer amount makes the token a non-simple transfer: without its binary, the reference's
  // binaries refusal comes first (validate_prove_request runs it before is_correct); with it, well_formed
  await rejects(checkSpell(args(spellOf({ ins, outs: [[[0, 'lots']]], apps: [[BRO, null]] }), prev)), 'INVALID_SPELL', /^binaries must contain exactly/);
  await rejects(
    checkSpell(args(spellOf({ ins, outs: [[[0, 'lots']]], apps: [[BRO, null]] }), prev, { binaries: [[BRO.vk, FAKE_WASM]] })),
    'INVALID_SPELL',
    /^Condition failed: `well_formed\(spell, &prev_spells, tx_ins_beamed_source_utxos\)`: tx\.outs\[0\]: the amount of token t\/3d7fe7e4.* must be an unsigned 64-bit integer/,
  );
  await rejects(
    checkSpell(args(spellOf({ ins, outs: [[[0, 105800000000n]]], apps: [[BRO, null]], version: 12 }), prev)),
    'INVALID_SPELL',
    /spell version 12 is not the current protocol version 15/,
  );
  await rejects(
    checkSpell(args(spellOf({ ins: [`${V12}:0`, `${V12}:0`], outs: [[[0, 23200000000n]]], apps: [[BRO, null]] }), prev)),
    'INVALID_SPELL',
    /spell\.tx\.ins contains duplicate UTXO: 28355906.*:0/,
  );
  await rejects(
    checkSpell(args(spellOf({ ins: [...ins, `${PLAIN}:0`], outs: [[[0, 105800000000n]]], apps: [[BRO, null]] }), prev)),
    'INVALID_SPELL',
    /prev_txs MUST contain transactions creating input UTXOs \(missing the one of 4125a400.*:0\)/,
  );
  await rejects(
    checkSpell(args(spellOf({ ins, outs: [[[0, 105800000000n]]], apps: [[BRO, null]] }), [chainTx(V12), chainTx(PLAIN)])),
    'INVALID_SPELL',
    /prev_txs must contain exactly the transactions producing spell inputs and beaming sources\. Required: \{28355906.*\} Provided: \{/,
  );
  // vout beyond the transaction's outputs (the reference bound is `<=`, the coin lookup catches the rest)
  await rejects(
    checkSpell(args(spellOf({ ins: [`${V12}:${99}`], outs: [], apps: [] }), prev)),
    'INVALID_SPELL',
    /input #0 28355906.*:99 is not created by the given prev_txs/,
  );
  // coins must match outs
  const s = spellOf({ ins, outs: [[[0, 105800000000n]]], apps: [[BRO, null]] });
  s.tx.coins = [];
  await rejects(checkSpell(args(s, prev)), 'INVALID_SPELL', /coins length \(0\) must match outs length \(1\)/);
});

test('beamed inputs need a finality proof of the beaming source transaction', async (t) => {
  if (!sharedOrSkip(t)) return;
  const spell = spellOf({ ins: [`${PLAIN}:0`], outs: [[[0, 11600000000n]]], apps: [[BRO, null]] });
  await rejects(
    checkSpell(args(spell, [chainTx(PLAIN), chainTx(V12)], { tx_ins_beamed_source_utxos: new Map([[0, { utxo: u(`${V12}:0`) }]]) })),
    'INVALID_SPELL',
    /beaming finality: input #0's beaming source transaction 28355906.* needs a valid finality proof/,
  );
  // the beaming source must also be in prev_txs
  await rejects(
    checkSpell(args(spell, [chainTx(PLAIN)], { tx_ins_beamed_source_utxos: new Map([[0, { utxo: u(`${V12}:0`) }]]) })),
    'INVALID_SPELL',
    /prev_txs MUST contain transactions creating beaming source and destination UTXOs \(input #0\)/,
  );
});

test('beaming rules (no finality fixture exists, so on hand-made prev spells): hash of destination and nonce, charms travel', () => {
  const app = tokenApp();
  const src = u(`${'aa'.repeat(32)}:0`);
  const dest = u(`${'bb'.repeat(32)}:1`);
  const mkPrev = (txid: Uint8Array, spell: NormalizedSpell, numOuts: number): PrevSpell => ({
    txid,
    spell,
    numOuts,
    tx: { chain: 'bitcoin', hex: '00' },
    verified: true,
  });
  const srcSpell: NormalizedSpell = {
    version: 15,
    tx: { ins: [], outs: [new Map([[0, 9n]])], beamed_outs: new Map([[0, utxoHashWithNonce(dest, 7n)]]), coins: [coin()] },
    app_public_inputs: [[app, null]],
    versioned_apps: [],
    mock: false,
  };
  const destSpell: NormalizedSpell = {
    version: 15,
    tx: { ins: [], outs: [], coins: [coin(1n), coin(2n)] },
    app_public_inputs: [],
    versioned_apps: [],
    mock: false,
  };
  const prev = new Map([
    [toHex(src.txid), mkPrev(src.txid, srcSpell, 1)],
    [toHex(dest.txid), mkPrev(dest.txid, destSpell, 2)],
  ]);
  const spell = spellOf({ ins: [`${'bb'.repeat(32)}:1`], outs: [[[0, 9n]]], apps: [[app, null]] });
  wellFormed(spell, prev, new Map([[0, { utxo: src, nonce: 7n }]]));
  assert.throws(() => wellFormed(spell, prev, new Map([[0, { utxo: src, nonce: 8n }]])), /input #0: beaming source a{64}:0 was not beamed to b{64}:1/);
  assert.throws(() => wellFormed(spell, prev, new Map([[0, { utxo: src }]])), /was not beamed to/);
  // the beamed-out source cannot itself be spent
  assert.throws(
    () => wellFormed(spellOf({ ins: [`${'aa'.repeat(32)}:0`], outs: [], apps: [] }), prev, new Map()),
    /is not created by the given prev_txs \(or was beamed out\)/,
  );
  // the app sees the source's charms on the destination input, and the destination's own coin
  const tx = appTransaction(spell, prev, new Map([[0, { utxo: src, nonce: 7n }]]));
  assert.deepEqual(
    tx.ins[0]![1].map(([, d]) => d),
    [9n],
  );
  assert.equal(tx.coinIns![0]!.amount, 2n);
});

test('spending a charm needs its app listed; refs must come from input transactions (reference rule)', async (t) => {
  if (!sharedOrSkip(t)) return;
  await rejects(
    checkSpell(args(spellOf({ ins: [`${V12}:0`], outs: [[]], apps: [] }), [chainTx(V12)])),
    'INVALID_SPELL',
    /input #0 \(28355906.*:0\) carries a charm for app t\/3d7fe7e4.*but the spending spell does not list it in `app_public_inputs`\. Spending \(or burning\)/,
  );
  // a ref to the v12 tx while spending only a plain output
  await rejects(
    checkSpell(args(spellOf({ ins: [`${PLAIN}:0`], refs: [`${V12}:0`], outs: [[]], apps: [] }), [chainTx(PLAIN), chainTx(V12)])),
    'INVALID_SPELL',
    /\{28355906.*\} only produce refs/,
  );
  // a ref into an input's own transaction is fine; refs carry their charms to apps
  const app = tokenApp('x');
  const rec = recorder();
  await checkSpell(
    args(spellOf({ ins: [`${V12}:1`], refs: [`${V12}:0`], outs: [[]], apps: [[app, null]] }), [chainTx(V12)], {
      binaries: [[app.vk, FAKE_WASM]],
      runApp: rec.run,
    }),
  );
  const tx = (decodeCbor(rec.calls[0]!.stdin) as Value[])[1] as ValueMap;
  const refs = tx.get('refs') as Value[][];
  assert.deepEqual(refs[0]![0], utxoIdToBytes(u(`${V12}:0`)));
  assert.equal((refs[0]![1] as ValueMap).entries[0]![1], 11600000000n);
});

test('the stdin handed to an app: CBOR [app, tx, x, w] with the reference field order and forms', async (t) => {
  if (!sharedOrSkip(t)) return;
  const app = tokenApp();
  const spell = spellOf({ ins: [`${PLAIN}:0`], outs: [[[0, 5n]], []], apps: [[app, 'mint']] });
  const rec = recorder();
  const r = await checkSpell(
    args(spell, [chainTx(PLAIN)], {
      app_private_inputs: [[app, new ValueMap([['secret', 7n]])]],
      binaries: [[app.vk, FAKE_WASM]],
      runApp: rec.run,
    }),
  );
  assert.deepEqual(r.cycles, [123n]);
  assert.deepEqual(r.notices, [`✅  app contract satisfied: ${appToString(app)}`]);
  assert.equal(rec.calls.length, 1);
  const { stdin, wasm, expectedVersion } = rec.calls[0]!;
  assert.equal(wasm, FAKE_WASM);
  assert.equal(expectedVersion, undefined);
  assert.deepEqual(encodeCbor(decodeCbor(stdin)), stdin, 'definite, minimal, round-trips byte for byte');
  const top = decodeCbor(stdin) as Value[];
  assert.equal(top.length, 4);
  const appValue = ['t', Array.from(app.identity, BigInt), Array.from(app.vk, BigInt)];
  assert.deepEqual(top[0], appValue);
  assert.equal(top[2], 'mint');
  assert.ok(top[3] instanceof ValueMap && top[3].get('secret') === 7n);
  const tx = top[1] as ValueMap;
  assert.deepEqual(
    tx.entries.map(([k]) => k),
    ['ins', 'refs', 'outs', 'coin_ins', 'coin_outs', 'prev_txs', 'app_public_inputs'],
  );
  const ins = tx.get('ins') as Value[][];
  assert.deepEqual(ins[0]![0], utxoIdToBytes(u(`${PLAIN}:0`)));
  assert.deepEqual((ins[0]![1] as ValueMap).entries, []);
  assert.deepEqual(tx.get('refs'), []);
  const outs = tx.get('outs') as ValueMap[];
  assert.deepEqual(outs[0]!.entries, [[appValue, 5n]]);
  assert.deepEqual(outs[1]!.entries, []);
  const coinIns = tx.get('coin_ins') as ValueMap[];
  const plain = prevSpells([chainTx(PLAIN)], spell, false).get(toHex(txidFromDisplay(PLAIN)))!;
  assert.equal(coinIns[0]!.get('amount'), plain.spell.tx.coins![0]!.amount);
  assert.deepEqual(coinIns[0]!.get('dest'), Array.from(plain.spell.tx.coins![0]!.dest, BigInt), 'dest as an array of uints');
  assert.equal(coinIns[0]!.has('content'), false);
  const coinOuts = tx.get('coin_outs') as ValueMap[];
  assert.deepEqual(
    coinOuts.map((c) => c.get('amount')),
    [1000n, 1000n],
  );
  const prevTxs = tx.get('prev_txs') as ValueMap;
  assert.deepEqual(prevTxs.entries[0]![0], txidFromDisplay(PLAIN), 'txid bytes, internal order');
  assert.ok(prevTxs.entries[0]![1] instanceof ValueMap);
  assert.equal((prevTxs.entries[0]![1] as ValueMap).get('bitcoin'), chainTx(PLAIN).hex);
  assert.deepEqual((tx.get('app_public_inputs') as ValueMap).entries, [[appValue, 'mint']]);
});

test('a contract that rejects gives APP_FAILED naming the app and carrying its stderr', async (t) => {
  if (!sharedOrSkip(t)) return;
  const app = tokenApp();
  const spell = spellOf({ ins: [`${PLAIN}:0`], outs: [[[0, 5n]]], apps: [[app, null]] });
  const seen: string[] = [];
  const rec = recorder({ ok: false, stderr: 'condition does not hold: minting allowed\n', error: 'error running wasm: unreachable' });
  await rejects(
    checkSpell(args(spell, [chainTx(PLAIN)], { binaries: [[app.vk, FAKE_WASM]], runApp: rec.run, onAppStderr: (_a, s) => seen.push(s) })),
    'APP_FAILED',
    new RegExp(
      `app contract for ${appToString(app)} rejected the transaction \\(error running wasm: unreachable; stderr: condition does not hold: minting allowed\\)`,
    ),
  );
  assert.deepEqual(seen, ['condition does not hold: minting allowed\n']);
  // a binary that is not the app's
  const other = utf8('another binary');
  await rejects(
    checkSpell(args(spell, [chainTx(PLAIN)], { binaries: [[app.vk, other]], runApp: rec.run })),
    'INVALID_SPELL',
    /app\.vk mismatch \(binary hash\) for app: t\//,
  );
});

test('versioned apps: binary pinned by wasm_hash, signed by the key whose hash is the vk', async (t) => {
  if (!sharedOrSkip(t)) return;
  const key = appKeyFromSecret(sha256(utf8('checker test key')));
  const app: App = { tag: 't', identity: sha256(utf8('v-id')), vk: sha256(key.public_key) };
  const wasmHash = sha256(FAKE_WASM);
  const spell = spellOf({ ins: [`${PLAIN}:0`], outs: [[[0, 5n]]], apps: [[app, null]], versioned: [[app.vk, { version: 2, wasm_hash: wasmHash }]] });
  const binaries: [B32, Uint8Array][] = [[wasmHash, FAKE_WASM]];
  const sig = signBinary(key, FAKE_WASM);
  const rec = recorder();
  const r = await checkSpell(args(spell, [chainTx(PLAIN)], { binaries, app_signatures: [[app.vk, sig]], runApp: rec.run }));
  assert.deepEqual(r.cycles, [123n]);
  assert.equal(rec.calls[0]!.expectedVersion, 2);
  await rejects(
    checkSpell(args(spell, [chainTx(PLAIN)], { binaries, runApp: rec.run })),
    'INVALID_SPELL',
    /app_signatures must contain exactly one entry per non-simple-transfer versioned app referenced in the spell\. Required app vks: \{[0-9a-f]{64}\} Provided app vks: \{\}/,
  );
  const wrong = signBinary(key, utf8('some other binary'));
  await rejects(
    checkSpell(args(spell, [chainTx(PLAIN)], { binaries, app_signatures: [[app.vk, wrong]], runApp: rec.run })),
    'INVALID_SPELL',
    /BIP-340 Schnorr signature verification failed for t\//,
  );
  const orphan = {
    ...spell,
    versioned_apps: [...spell.versioned_apps, [sha256(utf8('nobody')), { version: 1, wasm_hash: wasmHash }]] as NormalizedSpell['versioned_apps'],
  };
  await rejects(
    checkSpell(args(orphan, [chainTx(PLAIN)], { binaries, app_signatures: [[app.vk, sig]], runApp: rec.run })),
    'INVALID_SPELL',
    /versioned_apps contains unused vk: /,
  );
  // a simple app (vk = binary hash) cannot be declared versioned when its spent charms were simple
  const bro = spellOf({ ins: [`${V12}:0`], outs: [[[0, 11600000000n]]], apps: [[BRO, null]], versioned: [[BRO.vk, { version: 1, wasm_hash: wasmHash }]] });
  await rejects(
    checkSpell(args(bro, [chainTx(V12)])),
    'INVALID_SPELL',
    /treated this app as simple \(no `versioned_apps` entry\); the spending spell cannot retroactively declare it versioned/,
  );
});

test('Scrolls: a scroll charm must sit in a listed output; listed outputs on Bitcoin are reported unbound', async (t) => {
  if (!sharedOrSkip(t)) return;
  const app = tokenApp('s');
  const binaries: [B32, Uint8Array][] = [[app.vk, FAKE_WASM]];
  const rec = recorder();
  await rejects(
    checkSpell(args(spellOf({ ins: [`${PLAIN}:0`], outs: [[[0, 1n]]], apps: [[app, null]] }), [chainTx(PLAIN)], { binaries, runApp: rec.run })),
    'INVALID_SPELL',
    /output #0 carries a SCROLL-tagged charm but is not listed in `tx\.scrolls`/,
  );
  await rejects(
    checkSpell(
      args(spellOf({ ins: [`${PLAIN}:0`], outs: [[[0, 1n]]], apps: [[app, null]], scrolls: [0, 3] }), [chainTx(PLAIN)], { binaries, runApp: rec.run }),
    ),
    'INVALID_SPELL',
    /`tx\.scrolls` references output #3 but the spell only has 1 output/,
  );
  const r = await checkSpell(
    args(spellOf({ ins: [`${PLAIN}:0`], outs: [[[0, 1n]]], apps: [[app, null]], scrolls: [0] }), [chainTx(PLAIN)], { binaries, runApp: rec.run }),
  );
  assert.equal(r.scrollsBound, false);
  assert.match(r.notices[0]!, /Scrolls outputs whose scriptPubKeys are not yet bound/);
});

test('Cardano: a plain prev tx gives coin_ins with default content; missing output content gets the default', async (t) => {
  if (!sharedOrSkip(t)) return;
  const app = tokenApp();
  const spell = spellOf({ ins: [`${CARDANO_PLAIN}:0`], outs: [[[0, 5n]]], apps: [[app, null]] });
  const rec = recorder();
  const shape = validateProveRequestShape(args(spell, [chainTx(CARDANO_PLAIN, 'cardano')], { chain: 'cardano', binaries: [[app.vk, FAKE_WASM]] }));
  assert.ok(shape.spell.tx.coins![0]!.content instanceof ValueMap);
  const r = await checkSpell(args(spell, [chainTx(CARDANO_PLAIN, 'cardano')], { chain: 'cardano', binaries: [[app.vk, FAKE_WASM]], runApp: rec.run }));
  assert.deepEqual(r.cycles, [123n]);
  const tx = (decodeCbor(rec.calls[0]!.stdin) as Value[])[1] as ValueMap;
  const coinIn = (tx.get('coin_ins') as ValueMap[])[0]!;
  assert.equal(coinIn.get('amount'), 20000000n);
  assert.deepEqual(((coinIn.get('content') as ValueMap).get('multiasset') as ValueMap).entries, []);
  assert.equal(((tx.get('prev_txs') as ValueMap).entries[0]![1] as ValueMap).entries[0]![0], 'cardano');
  // Bitcoin coins must not carry content
  const bad = spellOf({ ins: [`${PLAIN}:0`], outs: [[]], apps: [] });
  bad.tx.coins = [{ ...coin(), content: 1n }];
  await rejects(checkSpell(args(bad, [chainTx(PLAIN)])), 'INVALID_SPELL', /coins\[0\]\.content must be None for Bitcoin/);
});

test('is_simple_transfer: tokens balance, NFT states as a multiset, other tags never; u64 overflow aborts', () => {
  const t = tokenApp('t');
  const n = tokenApp('n');
  const c = tokenApp('c');
  const mk = (ins: [App, Data][][], outs: [App, Data][][]): AppTransaction => ({
    ins: ins.map((ch, i) => [{ txid: new Uint8Array(32), vout: i }, ch]),
    refs: [],
    outs,
    prevTxs: [],
    appPublicInputs: [],
  });
  assert.equal(isSimpleTransfer(t, mk([[[t, 3n]], [[t, 4n]]], [[[t, 7n]]])), true);
  assert.equal(isSimpleTransfer(t, mk([[[t, 3n]]], [[[t, 4n]]])), false);
  assert.equal(isSimpleTransfer(t, mk([[[t, 'x']]], [[[t, 4n]]])), false);
  assert.equal(isSimpleTransfer(n, mk([[[n, 'a']], [[n, 'b']]], [[[n, 'b']], [[n, 'a']]])), true);
  assert.equal(isSimpleTransfer(n, mk([[[n, 'a']], [[n, 'a']]], [[[n, 'a']], [[n, 'b']]])), false);
  assert.equal(isSimpleTransfer(n, mk([[[n, 'a']]], [])), false);
  assert.equal(isSimpleTransfer(c, mk([], [])), false);
  assert.throws(() => sumTokenAmount(t, [[[t, (1n << 64n) - 1n]], [[t, 1n]]]), /sum beyond u64/);
  // once a value is not a u64 the reference stops adding, so no overflow after it
  assert.equal(sumTokenAmount(t, [[[t, 'x']], [[t, (1n << 64n) - 1n]], [[t, 1n]]]), undefined);
});

test('real runner: a WAT app that accepts only when its private input is `true`', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { default: wabtInit } = await import('wabt');
  const wabt = await wabtInit();
  // Reads stdin into memory at 1024 and traps unless the last byte (w) is CBOR true (0xf5).
  const wat = `(module
    (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
    (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
    (memory (export "memory") 2)
    (data (i32.const 16) "w is not true\\n")
    (func (export "_start") (local $total i32) (local $n i32)
      (loop $more
        (i32.store (i32.const 0) (i32.add (i32.const 1024) (local.get $total)))
        (i32.store (i32.const 4) (i32.const 4096))
        (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (local.set $n (i32.load (i32.const 8)))
        (local.set $total (i32.add (local.get $total) (local.get $n)))
        (br_if $more (i32.ne (local.get $n) (i32.const 0))))
      (if (i32.ne (i32.load8_u (i32.add (i32.const 1023) (local.get $total))) (i32.const 0xf5))
        (then
          (i32.store (i32.const 0) (i32.const 16))
          (i32.store (i32.const 4) (i32.const 14))
          (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))
          unreachable))))`;
  const mod = wabt.parseWat('w-true.wat', wat);
  const wasm = new Uint8Array(mod.toBinary({}).buffer);
  mod.destroy();
  const app: App = { tag: 't', identity: sha256(utf8('wat')), vk: sha256(wasm) };
  const spell = spellOf({ ins: [`${PLAIN}:0`], outs: [[[0, 21n]]], apps: [[app, null]] });
  const base = args(spell, [chainTx(PLAIN)], { binaries: [[app.vk, wasm]], runApp: realRunApp });
  const ok = await checkSpell({ ...base, app_private_inputs: [[app, true]] });
  assert.equal(ok.cycles.length, 1);
  assert.ok(ok.cycles[0]! > 0n, 'metered');
  await rejects(
    checkSpell({ ...base, app_private_inputs: [[app, false]] }),
    'APP_FAILED',
    /app contract for t\/.*rejected the transaction.*stderr: w is not true/,
  );
});

// ---------------------------------------------------------------- rule tests from YAML spells

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
    prev_txs: [{ chain: 'bitcoin' as const, hex: f.hex }],
    app_private_inputs: [],
    tx_ins_beamed_source_utxos: new Map(),
    binaries: [],
    app_signatures: [],
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
      prev_txs: [
        { chain: 'bitcoin', hex: f.hex },
        { chain: 'bitcoin', hex: other },
      ],
      tx_ins_beamed_source_utxos: new Map([[0, { utxo: utxoIdFromString('4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36:0') }]]),
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
  const vk = sha256(wasm);
  const app = `n/${'11'.repeat(32)}/${Buffer.from(vk).toString('hex')}`;
  let stdin: Uint8Array | undefined;
  const spy: RunApp = async (a) => ((stdin = a.stdin), { ok: true, cycles: 42n, stderr: '' });
  const spell = parseSpellText(
    `version: 15\ntx:\n  ins: [${f.txid}:0]\n  outs: [{0: {name: x}}]\n  coins: [{amount: 1000, dest: ${f.dest}}]\napp_public_inputs:\n  ${app}: 7\n`,
  );
  const r = await checkSpell({
    spell,
    prev_txs: [{ chain: 'bitcoin', hex: f.hex }],
    app_private_inputs: [],
    tx_ins_beamed_source_utxos: new Map(),
    binaries: [[vk, wasm]],
    app_signatures: [],
    chain: 'bitcoin',
    mock: false,
    runApp: spy,
  });
  assert.deepEqual(r.cycles, [42n]);
  const tuple = decodeCbor(stdin!) as unknown[];
  assert.equal(tuple.length, 4);
  assert.equal((tuple[0] as unknown[])[0], 'n');
  const tx = tuple[1] as ValueMap;
  assert.deepEqual(
    tx.entries.map(([k]) => k),
    ['ins', 'refs', 'outs', 'coin_ins', 'coin_outs', 'prev_txs', 'app_public_inputs'],
  );
  assert.ok(Array.isArray((tx.get('ins') as unknown[])[0]));
  assert.equal(tuple[2], 7n);
  assert.equal(tuple[3], null);
});

/**
 * A real beam: the Cardano tx 0f9b34a8… (eBTC, v12) beamed output 0 to the Bitcoin placeholder
 * `e7d468ff…:0` with nonce 8885959633213070619 (CharmsDev/eBTC scripts/beam-receive-c2b.sh @ 5a39ca4,
 * which also publishes the placeholder transaction below). Its finality signature is in
 * vectors/chain/0f9b34a8….cardano.finality.yaml.
 */
const BEAM_SOURCE = '0f9b34a89b50794e36331d61e6ea7ea59fa3990fe3129fbf26fefb57f031d02a';
const BEAM_DEST = 'e7d468ff6c9b04bfd2fa7fdbb3deb8a413bb5a1b1fcbec6d459bb720f94f1531:0';
const BEAM_NONCE = 8885959633213070619n;
/** The Bitcoin transaction creating the placeholder UTXO (txid e7d468ff…): outputs of 300 and 1600 sats. */
const BEAM_DEST_TX =
  '02000000000101716fdc9322d80bf1590bf11c808bc636dab249020e1baa9f29086e03f65c8c300200000000fdffffff022c01000000000000160014c82fdb303eb4298ee85c57aae0d065c0fc3879ca4006000000000000160014a916a1a21d6466f7fcabf9bd8778d8b9210a175d02473044022018bd3ac06fff40c6a84927a59944a0a1195960951d26d773b1b95bfb9fd1aed70220770e66005e1d248d6e8e4a4742beaabe97cd6eb8348a934f3df78d34a96d5d88012103795a0a445d83475154abb64108396d40d5d3e1f167083d2657b468baa628a6729e5d0e00';
const EBTC = appFromString(
  't/0796f63ed48144b4ec69fb794fbc2290ae63acf945fb035d5474648b50ee43b6/fd0cac892e457454be0212fa7d9a0e1517d5bd6a33aa7c66a1f10f55e375c290',
);

test('UTXO hash with nonce matches the beamed_outs entry of the real Cardano spell 0f9b34a8…', (t) => {
  if (!sharedOrSkip(t)) return;
  // the value committed on chain (proved by the source spell's Groth16 proof), read from the expectations
  const onChain = JSON.parse(readSharedText('vectors', 'chain', 'expected', `${BEAM_SOURCE}.json`)).spell.tx.beamed_outs['0'];
  assert.equal(onChain, '9f2419524744c6d99932633339ff9196fd98e53913533bcc9998576df619cb53');
  assert.equal(toHex(utxoHashWithNonce(u(BEAM_DEST), BEAM_NONCE)), onChain);
  assert.notEqual(toHex(utxoHashWithNonce(u(BEAM_DEST), BEAM_NONCE + 1n)), onChain);
  assert.notEqual(toHex(utxoHashWithNonce(u(BEAM_DEST))), onChain);
});

test('a beamed-receive spell with the real Cardano finality signature is accepted by checkSpell', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { parsePrevTx } = await import('../model/inputs.js');
  const { detectChain } = await import('../chains/detect.js');
  const source = parsePrevTx(readSharedText('vectors', 'chain', `${BEAM_SOURCE}.cardano.finality.yaml`), detectChain);
  assert.equal(source.chain, 'cardano');
  const dest: ChainTx = { chain: 'bitcoin', hex: BEAM_DEST_TX };
  // the receiving spell takes the beamed eBTC 999 and BRO 1 onto one Bitcoin output: a simple transfer
  const spell = spellOf({
    ins: [BEAM_DEST],
    outs: [
      [
        [0, 999n],
        [1, 1n],
      ],
    ],
    apps: [
      [EBTC, null],
      [BRO, null],
    ],
  });
  const beamedFrom = new Map([[0, { utxo: u(`${BEAM_SOURCE}:0`), nonce: BEAM_NONCE }]]);
  const r = await checkSpell(args(spell, [source, dest], { tx_ins_beamed_source_utxos: beamedFrom }));
  assert.deepEqual(r.cycles, [0n, 0n]);
  // the same spell fails with a wrong nonce, more charms than beamed, or no finality signature
  await assert.rejects(
    checkSpell(args(spell, [source, dest], { tx_ins_beamed_source_utxos: new Map([[0, { utxo: u(`${BEAM_SOURCE}:0`), nonce: BEAM_NONCE + 1n }]]) })),
    /was not beamed to e7d468ff/,
  );
  const greedy = spellOf({
    ins: [BEAM_DEST],
    outs: [
      [
        [0, 1000n],
        [1, 1n],
      ],
    ],
    apps: [
      [EBTC, null],
      [BRO, null],
    ],
  });
  await assert.rejects(checkSpell(args(greedy, [source, dest], { tx_ins_beamed_source_utxos: beamedFrom })), /not a simple transfer for: \[t\/0796f63e/);
  const unsigned: ChainTx = { chain: 'cardano', hex: source.hex };
  await assert.rejects(checkSpell(args(spell, [unsigned, dest], { tx_ins_beamed_source_utxos: beamedFrom })), /needs a valid finality proof/);
});
