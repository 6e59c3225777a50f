/**
 * Differential test against cml-chain 6.2.0 (the reference's Cardano parser, built to WASM as
 * `@dcspark/cardano-multiplatform-lib-nodejs`): seeded mutations of every Cardano vector, and we
 * must parse exactly when CML parses. Structural mutations aimed at CML's rules (unknown body and
 * witness-set keys, set tags other than 258, tagged map keys, field types) must agree exactly;
 * random bit flips must agree except for fields CML types deeper than we read (listed in
 * docs/cardano-parsing.md).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { decodeCbor, encodeCbor } from '../codec/cbor.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { fromHex } from '../util/bytes.js';
import { sharedOrSkip, sharedPath } from '../testing/shared.js';
import { parseCardanoTx, parseInputs, parseOutputs, parseRedeemers } from './tx.js';

const CML = (await import('@dcspark/cardano-multiplatform-lib-nodejs')).default;
let cmlError = '';
const cmlParses = (b: Uint8Array): boolean => {
  try {
    CML.Transaction.from_cbor_bytes(b).free();
    return true;
  } catch (e) {
    cmlError = String(e).slice(0, 300);
    return false;
  }
};
const weParse = (b: Uint8Array): boolean => {
  try {
    const tx = parseCardanoTx(b);
    parseInputs(tx);
    parseOutputs(tx);
    parseRedeemers(tx);
    return true;
  } catch {
    return false;
  }
};

function vectors(): Uint8Array[] {
  const dir = sharedPath('vectors', 'chain');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cardano.hex'))
    .sort()
    .map((f) => fromHex(readFileSync(`${dir}/${f}`, 'utf8').trim()));
}

function rng(seed: number) {
  return (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
}

/** One structural mutation of a decoded transaction `[body, witnesses, is_valid, aux]`. */
function mutate(tx: Value[], r: (n: number) => number): void {
  const body = tx[0] as ValueMap;
  const wit = tx[1] as ValueMap;
  const pick = <T>(xs: T[]): T => xs[r(xs.length)]!;
  const values: Value[] = [0n, 7n, [], new ValueMap(), new Uint8Array(32), null, 'x', new Tagged(258n, [])];
  switch (r(6)) {
    case 0: // a body key, known or not, with some value
      body.entries.push([BigInt(r(30)), pick(values)]);
      break;
    case 1: // a witness-set key
      wit.entries.push([BigInt(r(12)), pick(values)]);
      break;
    case 2: {
      // retag (or untag) one body/witness field
      const m = r(2) === 0 ? body : wit;
      const e = m.entries.length ? m.entries[r(m.entries.length)]! : undefined;
      if (!e) break;
      const inner = e[1] instanceof Tagged ? e[1].value : e[1];
      const tag = pick([258n, 259n, 24n, 1n, 55799n, -1n]);
      e[1] = tag < 0n ? inner : new Tagged(tag, inner);
      break;
    }
    case 3: {
      // a tagged map key
      const m = r(2) === 0 ? body : wit;
      const e = m.entries.length ? m.entries[r(m.entries.length)]! : undefined;
      if (e) e[0] = new Tagged(pick([258n, 2n, 100n]), e[0]);
      break;
    }
    case 4: {
      // a field replaced by a value of another type
      const e = body.entries.length ? body.entries[r(body.entries.length)]! : undefined;
      if (e) e[1] = pick(values);
      break;
    }
    default: // auxiliary data / is_valid replaced
      if (r(2) === 0) tx[3] = pick([null, undefined, 5n, new ValueMap()]);
      else tx[2] = pick([true, false, 1n]);
  }
}

test('Cardano parsing agrees with CML 6.2.0 on 2 000 structural mutations of the vectors', (t) => {
  if (!sharedOrSkip(t)) return;
  const txs = vectors();
  const r = rng(0xc4a1);
  let accepted = 0;
  for (let i = 0; i < 2000; i++) {
    const tx = decodeCbor(txs[r(txs.length)]!) as Value[];
    mutate(tx, r);
    if (r(3) === 0) mutate(tx, r);
    const bytes = encodeCbor(tx);
    const cml = cmlParses(bytes);
    assert.equal(weParse(bytes), cml, `mutant ${i}: CML ${cml ? 'parses' : `refuses (${cmlError})`} ${Buffer.from(bytes).toString('hex').slice(0, 120)}…`);
    if (cml) accepted++;
  }
  assert.ok(accepted > 200 && accepted < 1800, `both outcomes exercised (${accepted} accepted)`);
});

test('Cardano parsing agrees with CML 6.2.0 on 3 600 random bit flips of the vectors (documented exceptions only)', (t) => {
  if (!sharedOrSkip(t)) return;
  const r = rng(7);
  let n = 0;
  const disagree: string[] = [];
  for (const tx of vectors()) {
    assert.equal(weParse(tx), true);
    assert.equal(cmlParses(tx), true);
    for (let i = 0; i < 400; i++) {
      const m = Uint8Array.from(tx);
      const pos = r(m.length);
      m[pos]! ^= 1 << r(8);
      n++;
      if (weParse(m) !== cmlParses(m)) disagree.push(`byte ${pos}: we ${weParse(m) ? 'parse' : 'refuse'}`);
    }
  }
  t.diagnostic(`${n - disagree.length}/${n} agree; disagreements: ${disagree.join('; ')}`);
  // measured: 3 591 / 3 600 agree (docs/cardano-parsing.md lists what is left); more is a regression
  assert.ok(disagree.length <= 9, `${disagree.length} disagreements: ${disagree.join('; ')}`);
});
