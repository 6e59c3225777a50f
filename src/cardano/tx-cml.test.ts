/**
 * Differential test against cml-chain 6.2.0 (the reference's Cardano parser, built to WASM as
 * `@dcspark/cardano-multiplatform-lib-nodejs`): seeded mutations of every Cardano vector, and we
 * must parse exactly when CML parses. Structural mutations aimed at CML's rules (unknown body and
 * witness-set keys, set tags other than 258, tagged map keys, field types) must agree exactly;
 * random bit flips must agree except where the bytes are not one well-formed CBOR item, which we
 * refuse on purpose (docs/cardano-parsing.md).
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

/** Whether `b` is exactly one well-formed CBOR item (no trailing bytes). */
const oneCborItem = (b: Uint8Array): boolean => {
  try {
    decodeCbor(b);
    return true;
  } catch {
    return false;
  }
};

test('Cardano parsing agrees with CML 6.2.0 on 9 000 random bit flips of the vectors, but for the documented divergence', (t) => {
  if (!sharedOrSkip(t)) return;
  const r = rng(7);
  let n = 0;
  let divergent = 0;
  const disagree: string[] = [];
  for (const tx of vectors()) {
    assert.equal(weParse(tx), true);
    assert.equal(cmlParses(tx), true);
    for (let i = 0; i < 1000; i++) {
      const m = Uint8Array.from(tx);
      const pos = r(m.length);
      m[pos]! ^= 1 << r(8);
      n++;
      const we = weParse(m);
      const cml = cmlParses(m);
      if (we === cml) continue;
      // docs/cardano-parsing.md, "Deliberate divergences": bytes that are not exactly one
      // well-formed CBOR item (trailing bytes, or a definite length CML does not check) are refused
      if (!we && cml && !oneCborItem(m)) {
        divergent++;
        continue;
      }
      disagree.push(`byte ${pos}: we ${we ? 'parse' : 'refuse'}${cml ? '' : `, CML: ${cmlError}`}`);
    }
  }
  t.diagnostic(`${n - disagree.length - divergent}/${n} agree, ${divergent} documented divergences`);
  assert.deepEqual(disagree, []);
});

test('the field rules CML applies, one case each: we agree with CML and with the expected verdict', (t) => {
  if (!sharedOrSkip(t)) return;
  const base = vectors()[0]!;
  const edit = (f: (tx: Value[]) => void): Uint8Array => {
    const tx = decodeCbor(base) as Value[];
    f(tx);
    return encodeCbor(tx);
  };
  const b = (n: number): Uint8Array => new Uint8Array(n);
  const setBody = (k: bigint, v: Value) => (tx: Value[]) => {
    const body = tx[0] as ValueMap;
    body.entries = body.entries.filter(([x]) => x !== k);
    if (v !== undefined) body.entries.push([k, v]);
  };
  const setWitness = (k: bigint, v: Value) => (tx: Value[]) => {
    const w = tx[1] as ValueMap;
    w.entries = w.entries.filter(([x]) => x !== k);
    w.entries.push([k, v]);
  };
  const reward = (hdr: number) => Uint8Array.from([hdr, ...b(28)]);
  const M = (e: [Value, Value][]) => new ValueMap(e);
  const cases: [string, (tx: Value[]) => void, boolean][] = [
    ['fee missing', setBody(2n, undefined), false],
    ['withdrawal from a reward address', setBody(5n, M([[reward(0xe1), 0n]])), true],
    ['withdrawal from an enterprise address', setBody(5n, M([[reward(0x61), 0n]])), false],
    ['reference input with a byte-string index', setBody(18n, [[b(32), b(1)]]), false],
    ['reference input [hash32, uint]', setBody(18n, [[b(32), 3n]]), true],
    ['required signer of 27 bytes', setBody(14n, [b(27)]), false],
    [
      'mint of any int, zero included',
      setBody(
        9n,
        M([
          [
            b(28),
            M([
              [b(3), 0n],
              [b(4), -(1n << 64n)],
            ]),
          ],
        ]),
      ),
      true,
    ],
    ['mint asset name of 33 bytes', setBody(9n, M([[b(28), M([[b(33), 1n]])]])), false],
    ['proposal with a non-reward return address', setBody(20n, [[0n, reward(0x61), [6n], ['u', b(32)]]]), false],
    ['info proposal', setBody(20n, [[0n, reward(0xe1), [6n], ['u', b(32)]]]), true],
    [
      'vote with a 3-item action id',
      setBody(
        19n,
        M([
          [
            [0n, b(28)],
            M([
              [
                [b(32), 0n, 0n],
                [1n, null],
              ],
            ]),
          ],
        ]),
      ),
      false,
    ],
    ['vkey witness with a 63-byte signature', setWitness(0n, [[b(32), b(63)]]), false],
    [
      'native scripts of every kind',
      setWitness(1n, [
        [0n, b(28)],
        [1n, [[4n, 5n]]],
        [2n, []],
        [3n, 1n, [[5n, 9n]]],
      ]),
      true,
    ],
    ['native script kind 6', setWitness(1n, [[6n, 1n]]), false],
    ['native script list with a set tag', setWitness(1n, [[1n, new Tagged(258n, [])]]), false],
    ['bootstrap witness attributes not a map', setWitness(2n, [[b(32), b(64), b(32), Uint8Array.of(0x80)]]), false],
    ['bootstrap witness', setWitness(2n, [[b(32), b(64), b(32), Uint8Array.of(0xa0)]]), true],
    ['plutus v3 script that is not bytes', setWitness(7n, [0n]), false],
    ['plutus datum: 65 bytes in one string', setWitness(4n, [b(65)]), false],
    ['plutus datum: 64 bytes', setWitness(4n, [b(64)]), true],
    ['metadata text of 65 bytes', (tx) => void (tx[3] = M([[1n, 'x'.repeat(65)]])), false],
    ['Alonzo auxiliary data with an unknown key', (tx) => void (tx[3] = new Tagged(259n, M([[9n, 0n]]))), false],
    [
      'Alonzo auxiliary data',
      (tx) =>
        void (tx[3] = new Tagged(
          259n,
          M([
            [0n, M([[1n, 'x']])],
            [1n, [[4n, 1n]]],
          ]),
        )),
      true,
    ],
  ];
  for (const [name, f, expected] of cases) {
    const bytes = edit(f);
    assert.equal(cmlParses(bytes), expected, `${name}: CML ${cmlError}`);
    assert.equal(weParse(bytes), expected, name);
  }
});
