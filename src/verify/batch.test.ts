/**
 * Batch verification (verifySpells / verifySpellProofs) against per-proof verification: the same
 * verdict for every real chain vector and every real proof vector, on both pairing backends, and
 * mixed batches where one corrupted proof is found while the others still verify.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { extractAndVerifySpell, spellToJson, verifySpells, type TaggedTx } from './index.js';
import { initPairingBackend, verifySpellProof, verifySpellProofs, type PairingBackendName, type SpellProofCheck } from '../groth16/verify.js';
import { BN254_P } from '../groth16/gnark.js';
import { proveMock } from '../groth16/mock.js';
import { CharmsError } from '../errors.js';
import { fromHex, toHex } from '../util/bytes.js';
import { checkedSpellCbor } from '../groth16/spell.js';
import { encodeSpellCbor } from '../model/spell.js';
import { readSharedJson, readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';

const BACKENDS: PairingBackendName[] = ['noble', 'mcl-wasm'];

function chainTxs(): { name: string; tx: TaggedTx }[] {
  return readdirSync(sharedPath('vectors', 'chain'))
    .filter((f) => /\.(bitcoin|cardano)\.hex$/.test(f))
    .sort()
    .map((f) => {
      const hex = readSharedText('vectors', 'chain', f).trim();
      return { name: f, tx: f.endsWith('.bitcoin.hex') ? { bitcoin: hex } : { cardano: hex } };
    });
}

/** extractAndVerifySpell's verdict in comparable form: the spell JSON, or the error code. */
function single(tx: TaggedTx, mock: boolean): string {
  try {
    return `ok ${spellToJson(extractAndVerifySpell(tx, mock))}`;
  } catch (e) {
    assert.ok(e instanceof CharmsError);
    return `error ${e.code}`;
  }
}

const batched = (txs: TaggedTx[], mock: boolean): string[] =>
  verifySpells(txs, mock).map((v) => (v.ok ? `ok ${spellToJson(v.spell)}` : `error ${v.error.code}`));

const realProofs = (): SpellProofCheck[] =>
  readSharedJson<{ version: string; public_values_hex: string; proof_hex: string }[]>('vectors', 'groth16-real-btc.json').map((v) => ({
    version: Number(v.version),
    publicValues: fromHex(v.public_values_hex),
    proof: fromHex(v.proof_hex),
    mock: false,
  }));

/** The same proof with A replaced by −A: still valid points, but the pairing check fails. */
function negateA(c: SpellProofCheck): SpellProofCheck {
  const proof = Uint8Array.from(c.proof);
  const at = proof.length - 256 + 32; // A.y inside the gnark proof at the end
  let y = 0n;
  for (let i = 0; i < 32; i++) y = (y << 8n) | BigInt(proof[at + i]!);
  let ny = BN254_P - y;
  for (let i = 31; i >= 0; i--, ny >>= 8n) proof[at + i] = Number(ny & 0xffn);
  return { ...c, proof };
}

const verdictCodes = (vs: (CharmsError | undefined)[]) => vs.map((e) => e?.code ?? 'ok');

for (const kind of BACKENDS) {
  test(`[${kind}] verifySpells gives every chain vector the verdict and spell extractAndVerifySpell gives`, async (t) => {
    if (!sharedOrSkip(t)) return;
    await initPairingBackend(kind);
    const txs = chainTxs();
    assert.ok(txs.length >= 30, `${txs.length} chain vectors`);
    for (const mock of [false, true]) {
      const expected = txs.map((x) => single(x.tx, mock));
      assert.ok(expected.filter((v) => v.startsWith('ok')).length >= 12);
      assert.ok(expected.some((v) => v.startsWith('error')));
      const got = batched(
        txs.map((x) => x.tx),
        mock,
      );
      txs.forEach((x, i) => assert.equal(got[i], expected[i], `${x.name} (mock=${mock})`));
    }
    await initPairingBackend('noble');
  });

  test(`[${kind}] a batch with one corrupted proof finds it; the others still verify`, async (t) => {
    if (!sharedOrSkip(t)) return;
    await initPairingBackend(kind);
    const good = realProofs();
    assert.ok(good.length >= 3);
    for (const c of good) verifySpellProof(c); // each is valid on its own
    // the whole set, twice over (several proofs per verifying key), passes as one batch
    assert.deepEqual(
      verdictCodes(verifySpellProofs([...good, ...good])),
      [...good, ...good].map(() => 'ok'),
    );
    for (let bad = 0; bad < good.length; bad++) {
      for (const corrupt of [
        negateA,
        (c: SpellProofCheck): SpellProofCheck => ({ ...c, publicValues: Uint8Array.from(c.publicValues, (b, i) => (i === 20 ? b ^ 1 : b)) }),
      ]) {
        const batch = [...good, ...good];
        batch[good.length + bad] = corrupt(good[bad]!);
        assert.throws(() => verifySpellProof(batch[good.length + bad]!), /pairing check failed/); // a pairing failure, not a parse error
        const verdicts = verifySpellProofs(batch);
        assert.deepEqual(
          verdictCodes(verdicts),
          batch.map((_, i) => (i === good.length + bad ? 'PROOF_INVALID' : 'ok')),
          `corrupted v${good[bad]!.version}`,
        );
        assert.match(verdicts[good.length + bad]!.message, /pairing check failed/);
      }
    }
    await initPairingBackend('noble');
  });

  test(`[${kind}] mixed transaction batches: a tampered spell fails alone`, async (t) => {
    if (!sharedOrSkip(t)) return;
    await initPairingBackend(kind);
    const v = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json');
    const tx = fromHex(v.tx_hex);
    const payload = fromHex(v.payload_hex);
    const at = Buffer.from(tx).indexOf(Buffer.from(payload));
    const good = chainTxs()
      .map((x) => ({ tx: x.tx, verdict: single(x.tx, false) }))
      .filter((x) => x.verdict.startsWith('ok'));
    let pairingFailures = 0;
    // one flipped bit every 37 bytes of the spell and proof (after the pair's array header, which
    // ciborium reads leniently), each in its own batch of good txs
    const step = kind === 'noble' ? 151 : 37;
    for (let i = step; i < payload.length; i += step) {
      const bad = Uint8Array.from(tx);
      bad[at + i]! ^= 0x01;
      const batch = [...good.slice(0, 4), { tx: { bitcoin: bad }, verdict: single({ bitcoin: bad }, false) }, ...good.slice(4)];
      const got = batched(
        batch.map((x) => x.tx),
        false,
      );
      assert.deepEqual(
        got,
        batch.map((x) => x.verdict),
        `flip at payload byte ${i}`,
      );
      assert.match(got[4]!, /^error/);
      const alone = verifySpells([{ bitcoin: bad }], false)[0]!;
      if (!alone.ok && /pairing check failed/.test(alone.error.message)) pairingFailures++;
    }
    assert.ok(pairingFailures >= (kind === 'noble' ? 1 : 5), `${pairingFailures} flips reached the pairing check`);
    await initPairingBackend('noble');
  });
}

test('verifySpellProofs: mock proofs and malformed proofs keep their single verdicts', async () => {
  const pv = new Uint8Array(100).fill(3);
  const mock = proveMock(pv);
  const checks: SpellProofCheck[] = [
    { version: 15, publicValues: pv, proof: mock, mock: true },
    { version: 15, publicValues: pv.map((b) => b ^ 1), proof: mock, mock: true },
    { version: 12, publicValues: pv, proof: new Uint8Array(10), mock: false },
    { version: 99, publicValues: pv, proof: new Uint8Array(356), mock: false },
  ];
  const single = checks.map((c) => {
    try {
      verifySpellProof(c);
      return 'ok';
    } catch (e) {
      return `${(e as CharmsError).code}: ${(e as Error).message}`;
    }
  });
  assert.equal(single[0], 'ok');
  assert.deepEqual(
    verifySpellProofs(checks).map((e) => (e ? `${e.code}: ${e.message}` : 'ok')),
    single,
  );
  assert.deepEqual(verifySpellProofs([]), []);
});

test('a verified spell keeps the CBOR its proof was checked against: encodeSpellCbor of the spell returned', async (t) => {
  if (!sharedOrSkip(t)) return;
  await initPairingBackend('mcl-wasm');
  let n = 0;
  for (const v of verifySpells(
    chainTxs().map((c) => c.tx),
    false,
  )) {
    if (!v.ok) continue;
    n++;
    assert.equal(toHex(checkedSpellCbor(v.spell)!), toHex(encodeSpellCbor(v.spell)));
  }
  assert.ok(n > 5);
});
