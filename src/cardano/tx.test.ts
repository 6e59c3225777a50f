import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { cardanoTxHash, cardanoTxid, parseCardanoTx, parseInputs, parseOutputs, parseRedeemers } from './tx.js';
import { extractAndVerifyCardano, findCardanoSpell, fillFromCardanoTx } from './extract.js';
import { spellToJson } from '../verify/index.js';
import { decodeCbor, encodeCbor } from '../codec/cbor.js';
import { ValueMap, type Value } from '../codec/value.js';

test('tx hash = blake2b-256 of the original body bytes (file names), Charms txid reversed', (t) => {
  if (!sharedOrSkip(t)) return;
  const files = readdirSync(sharedPath('vectors', 'chain')).filter((f) => f.endsWith('.cardano.hex') && !f.startsWith('neg'));
  assert.ok(files.length >= 7);
  for (const f of files) {
    const tx = parseCardanoTx(fromHex(readSharedText('vectors', 'chain', f).trim()));
    const id = f.slice(0, 64);
    assert.equal(toHex(cardanoTxHash(tx)), id);
    assert.equal(toHex(cardanoTxid(tx)), toHex(fromHex(id).reverse()));
    assert.ok(parseInputs(tx).length > 0);
    assert.ok(parseOutputs(tx).length > 0);
  }
});

test('both redeemer encodings are read: the legacy array and the Conway map (same verified spell)', (t) => {
  if (!sharedOrSkip(t)) return;
  const bytes = fromHex(readSharedText('vectors', 'chain', '361927aed267ef049a5b9315aa7296493b385938d73340146b0af5d4637a02cf.cardano.hex').trim());
  const reds = parseRedeemers(parseCardanoTx(bytes))!;
  assert.equal(toHex(reds.find((r) => r.tag === 3)!.data as Uint8Array), '83000201');
  // convert the witness set's redeemers to the other encoding; the body (and so the proof) is untouched
  const v = decodeCbor(bytes) as Value[];
  const ws = v[1] as ValueMap;
  const entry = ws.entries.find(([k]) => k === 5n)!;
  const wasArray = Array.isArray(entry[1]);
  entry[1] = wasArray
    ? new ValueMap(
        (entry[1] as Value[][]).map(
          (r) =>
            [
              [r[0]!, r[1]!],
              [r[2]!, r[3]!],
            ] as [Value, Value],
        ),
      )
    : (entry[1] as ValueMap).entries.map(([k, x]) => [...(k as Value[]), ...(x as Value[])]);
  const other = encodeCbor(v);
  assert.equal(toHex(cardanoTxHash(parseCardanoTx(other))), toHex(cardanoTxHash(parseCardanoTx(bytes))));
  const converted = ((decodeCbor(other) as Value[])[1] as ValueMap).entries.find(([k]) => k === 5n)![1];
  assert.equal(Array.isArray(converted), !wasArray);
  assert.deepEqual(parseRedeemers(parseCardanoTx(other)), reds);
  assert.equal(spellToJson(extractAndVerifyCardano(other, false)), spellToJson(extractAndVerifyCardano(bytes, false)));
});

test('garbage and mutated transactions give CharmsErrors, never crashes', (t) => {
  for (const hex of [
    '',
    '00',
    '80',
    '84',
    '84a0a0f5f6',
    '84a0a0f5f600',
    '83a0a0f6',
    '02000000' + 'ff'.repeat(40),
    '84a100f6a0f5f6',
    '84a10080a0f5f6',
    '84a2008001f6a0f5f6',
  ])
    assert.throws(
      () => extractAndVerifyCardano(fromHex(hex), true),
      (e: unknown) => e instanceof CharmsError,
      hex,
    );
  if (!sharedOrSkip(t)) return;
  const tx = fromHex(readSharedText('vectors', 'chain', '361927aed267ef049a5b9315aa7296493b385938d73340146b0af5d4637a02cf.cardano.hex').trim());
  // deterministic pseudo-random single-byte mutations and truncations of everything but the
  // proof-bearing datum (parse + extract + fill only: fast)
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000;
  let ok = 0;
  let failed = 0;
  for (let k = 0; k < 3000; k++) {
    const bad = Uint8Array.from(tx);
    const i = Math.floor(rnd() * tx.length);
    bad[i] = Math.floor(rnd() * 256);
    const input = k % 10 === 0 ? bad.subarray(0, i) : bad;
    try {
      const p = parseCardanoTx(input);
      fillFromCardanoTx(findCardanoSpell(p).spell, p);
      ok++;
    } catch (e) {
      assert.ok(e instanceof CharmsError, `mutation at ${i}: ${e instanceof Error ? e.stack : e}`);
      failed++;
    }
  }
  assert.ok(failed > 100 && ok > 100, `${ok} ok, ${failed} failed`);
});
