/**
 * Spells in Cardano transactions: the inline datum (Plutus bytes) of one of the last two outputs
 * carries `CBOR((spell, proof))`; the spell's input order comes from the withdraw (Reward)
 * redeemer's permutation; coins are rebuilt per output with their `content` (assets other than
 * the charms' own native tokens, datum, script reference), as the proof commits to them.
 */
import { CharmsError } from '../errors.js';
import { decodeCbor } from '../codec/cbor.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { compareBytes, equalBytes, fromHex, reversed, toHex } from '../util/bytes.js';
import { appToString, type App, type UtxoId } from '../model/primitives.js';
import type { NativeOutput, NormalizedSpell } from '../model/spell.js';
import { decodeSpellAndProof, verifyFilledSpell, type SpellAndProof } from '../verify/bitcoin.js';
import { parseCardanoTx, type CardanoTx } from './tx.js';
import { assetNameForApp, isTokenApp, policyIdForApp, proxyScriptHashForApps } from './scripts.js';

const noSpell = (m: string) => new CharmsError('NO_SPELL', m);
const bad = (m: string) => new CharmsError('INVALID_SPELL', m);

const untag = (v: Value): Value => (v instanceof Tagged && v.tag === 258n ? v.value : v);
const int = (v: Value | undefined): bigint => (typeof v === 'bigint' ? v : 0n);

export interface CardanoOutput {
  address: Uint8Array;
  lovelace: bigint;
  /** policy hex → asset hex → quantity */
  assets: Map<string, Map<string, bigint>>;
  datum?: { hash: Uint8Array } | { inline: Value };
  scriptRef?: Value;
}

function parseValue(v: Value | undefined): { lovelace: bigint; assets: Map<string, Map<string, bigint>> } {
  const assets = new Map<string, Map<string, bigint>>();
  if (Array.isArray(v)) {
    const ma = v[1];
    if (ma instanceof ValueMap)
      for (const [p, inner] of ma.entries) {
        if (!(p instanceof Uint8Array) || !(inner instanceof ValueMap)) continue;
        const m = new Map<string, bigint>();
        for (const [n, q] of inner.entries) if (n instanceof Uint8Array) m.set(toHex(n), int(q));
        assets.set(toHex(p), m);
      }
    return { lovelace: int(v[0]), assets };
  }
  return { lovelace: int(v), assets };
}

export function parseOutputs(tx: CardanoTx): CardanoOutput[] {
  const outs = untag(bodyField(tx, 1) ?? null) as Value[];
  if (!Array.isArray(outs)) throw new CharmsError('INVALID_TX', 'Cardano transaction has no outputs');
  return outs.map((o) => {
    if (Array.isArray(o)) {
      const { lovelace, assets } = parseValue(o[1]);
      const out: CardanoOutput = { address: o[0] as Uint8Array, lovelace, assets };
      if (o[2] instanceof Uint8Array) out.datum = { hash: o[2] };
      return out;
    }
    const m = o as ValueMap;
    const get = (k: number) => m.entries.find(([key]) => key === BigInt(k))?.[1];
    const { lovelace, assets } = parseValue(get(1));
    const out: CardanoOutput = { address: get(0) as Uint8Array, lovelace, assets };
    const d = get(2);
    if (Array.isArray(d)) {
      if (d[0] === 0n && d[1] instanceof Uint8Array) out.datum = { hash: d[1] };
      if (d[0] === 1n && d[1] instanceof Tagged && d[1].value instanceof Uint8Array) out.datum = { inline: decodeCbor(d[1].value) };
    }
    const sr = get(3);
    if (sr instanceof Tagged && sr.value instanceof Uint8Array) out.scriptRef = decodeCbor(sr.value);
    return out;
  });
}

export function bodyField(tx: CardanoTx, key: number): Value | undefined {
  return tx.body.entries.find(([k]) => k === BigInt(key))?.[1];
}

export function parseInputs(tx: CardanoTx): UtxoId[] {
  const ins = untag(bodyField(tx, 0) ?? []);
  if (!Array.isArray(ins)) throw new CharmsError('INVALID_TX', 'Cardano transaction inputs are not a list');
  return ins.map((i) => {
    const [h, ix] = i as [Uint8Array, bigint];
    return { txid: reversed(h), vout: Number(ix) };
  });
}

/** The spell payload: inline datum holding Plutus bytes, in one of the last two outputs. */
function findSpellPayload(outs: CardanoOutput[]): Uint8Array {
  for (let i = outs.length - 1; i >= Math.max(0, outs.length - 2); i--) {
    const d = outs[i]!.datum;
    if (d && 'inline' in d && d.inline instanceof Uint8Array) return d.inline;
  }
  throw noSpell('Transaction has no spell output');
}

/** The withdraw (Reward, tag 3) redeemer's data: CBOR(Vec<u32>) in Plutus bytes. */
function inputPermutation(tx: CardanoTx): number[] {
  const ws = tx.witnessSet instanceof ValueMap ? tx.witnessSet : undefined;
  const red = ws?.entries.find(([k]) => k === 5n)?.[1];
  if (red === undefined) throw bad('Transaction has no redeemers');
  let data: Value | undefined;
  if (Array.isArray(red)) data = (red as Value[][]).find((r) => r[0] === 3n)?.[2];
  else if (red instanceof ValueMap) data = red.entries.find(([k]) => Array.isArray(k) && k[0] === 3n)?.[1];
  if (Array.isArray(data)) data = data[0];
  if (!(data instanceof Uint8Array)) throw bad('Transaction has no Reward redeemer carrying the input permutation');
  const perm = decodeCbor(data);
  if (!Array.isArray(perm) || !perm.every((x) => typeof x === 'bigint')) throw bad('input permutation is not a list of integers');
  return perm.map(Number);
}

/** Plutus data as cardano-node's detailed JSON schema (objects with sorted keys). */
function detailedJson(d: Value): Value {
  if (typeof d === 'bigint') return ValueMap.of({ int: d >= -(1n << 63n) && d < 1n << 64n ? d : Number(d) });
  if (d instanceof Uint8Array) return ValueMap.of({ bytes: toHex(d) });
  if (Array.isArray(d)) return ValueMap.of({ list: d.map(detailedJson) });
  if (d instanceof ValueMap) return ValueMap.of({ map: d.entries.map(([k, v]) => ValueMap.of({ k: detailedJson(k), v: detailedJson(v) })) });
  if (d instanceof Tagged) {
    const t = Number(d.tag);
    if (t === 2 || t === 3) {
      const b = d.value as Uint8Array;
      let n = 0n;
      for (const x of b) n = (n << 8n) | BigInt(x);
      return detailedJson(t === 2 ? n : -1n - n);
    }
    let ctor: number;
    let fields: Value = d.value;
    if (t >= 121 && t <= 127) ctor = t - 121;
    else if (t >= 1280 && t <= 1400) ctor = t - 1280 + 7;
    else if (t === 102 && Array.isArray(d.value)) {
      ctor = Number(d.value[0]);
      fields = d.value[1]!;
    } else throw new CharmsError('UNSUPPORTED', `Plutus data tag ${t} is not supported`);
    return ValueMap.of({ constructor: BigInt(ctor), fields: (fields as Value[]).map(detailedJson) });
  }
  throw new CharmsError('UNSUPPORTED', 'unsupported Plutus data in a datum');
}

function scriptRefValue(s: Value): Value {
  if (!Array.isArray(s) || typeof s[0] !== 'bigint') throw new CharmsError('UNSUPPORTED', 'unsupported script reference');
  const kind = Number(s[0]);
  if (kind === 0) throw new CharmsError('UNSUPPORTED', 'native script references are not supported yet');
  const name = ['', 'PlutusV1', 'PlutusV2', 'PlutusV3'][kind];
  if (!name || !(s[1] instanceof Uint8Array)) throw new CharmsError('UNSUPPORTED', 'unsupported script reference');
  return new ValueMap([[name, ValueMap.of({ script: toHex(s[1]) })]]);
}

/** Expected native tokens of an output's charms: policy hex → asset hex → quantity. */
function expectedTokens(charms: [App, Value][]): Map<string, Map<string, bigint>> {
  const out = new Map<string, Map<string, bigint>>();
  for (const [app, data] of charms) {
    if (!isTokenApp(app)) continue;
    const qty = app.tag === 'n' ? 1n : typeof data === 'bigint' ? data : 0n;
    const p = toHex(policyIdForApp(app));
    const a = toHex(assetNameForApp(app));
    const m = out.get(p) ?? new Map<string, bigint>();
    m.set(a, (m.get(a) ?? 0n) + qty);
    out.set(p, m);
  }
  return out;
}

function multiassetValue(assets: Map<string, Map<string, bigint>>): ValueMap {
  const byBytes = (a: string, b: string) => compareBytes(fromHex(a), fromHex(b));
  return new ValueMap(
    [...assets.keys()].sort(byBytes).map((p) => {
      const inner = assets.get(p)!;
      return [p, new ValueMap([...inner.keys()].sort(byBytes).map((a) => [a, inner.get(a)!]))];
    }),
  );
}

/** `native_outs_comply` for one output, and the assets left once the charms' tokens are taken out. */
function contentAssets(i: number, out: CardanoOutput, charms: [App, Value][], beamedOut: boolean): Map<string, Map<string, bigint>> {
  const rest = new Map([...out.assets].map(([p, m]) => [p, new Map(m)]));
  if (beamedOut) return rest;
  for (const [p, m] of expectedTokens(charms))
    for (const [a, q] of m) {
      const have = rest.get(p)?.get(a) ?? 0n;
      if (have !== q) throw bad(`output #${i}: expected ${q} of native token ${p}.${a} for its charms, found ${have}`);
      rest.get(p)!.delete(a);
      if (rest.get(p)!.size === 0) rest.delete(p);
    }
  const nonToken = charms.map(([a]) => a).filter((a) => !isTokenApp(a));
  const header = out.address[0]!;
  const paymentIsScript = (header & 0x10) !== 0 && (header >> 4) <= 7;
  const payment = out.address.subarray(1, 29);
  if (nonToken.length > 0) {
    if (!paymentIsScript || !equalBytes(payment, proxyScriptHashForApps(nonToken)))
      throw bad(`output #${i}: charms of ${nonToken.map(appToString).join(', ')} must sit at their proxy script address`);
  } else if (paymentIsScript && equalBytes(payment, proxyScriptHashForApps([]))) throw bad(`output #${i}: sits at the proxy address of no apps`);
  return rest;
}

export function findCardanoSpell(tx: CardanoTx): SpellAndProof {
  return decodeSpellAndProof(findSpellPayload(parseOutputs(tx)));
}

/** Fills `ins` (via the permutation, which must be a bijection) and `coins` (with content from v11). */
export function fillFromCardanoTx(spell: NormalizedSpell, tx: CardanoTx): NormalizedSpell {
  const outs = parseOutputs(tx);
  const inputs = parseInputs(tx);
  if (inputs.length === 0 || outs.length === 0) throw bad('transaction must have inputs and outputs');
  if (spell.tx.ins !== undefined) throw bad('spell must inherit inputs from the enchanted tx');
  if (spell.tx.outs.length >= outs.length) throw bad('spell tx outs mismatch');
  const perm = inputPermutation(tx);
  // Divergence from the reference (documented): a permutation must be a bijection over the
  // inputs; the reference accepts repeated indexes, which could count one input twice.
  if (perm.length !== inputs.length || new Set(perm).size !== perm.length || perm.some((p) => p < 0 || p >= inputs.length))
    throw bad(`input permutation [${perm.join(', ')}] is not a permutation of the ${inputs.length} inputs`);
  const apps = spell.app_public_inputs.map(([a]) => a);
  const coins: NativeOutput[] = spell.tx.outs.map((charmsMap, i) => {
    const out = outs[i]!;
    const charms = [...charmsMap.entries()].map(([k, d]) => [apps[k]!, d] as [App, Value]);
    const beamed = spell.tx.beamed_outs?.has(i) ?? false;
    const rest = contentAssets(i, out, charms, beamed);
    const coin: NativeOutput = { amount: out.lovelace, dest: out.address };
    if (spell.version > 10) {
      const content = new ValueMap([['multiasset', multiassetValue(rest)]]);
      if (out.datum)
        content.set(
          'datum',
          'hash' in out.datum
            ? ValueMap.of({ Hash: ValueMap.of({ datum_hash: toHex(out.datum.hash) }) })
            : ValueMap.of({ Datum: ValueMap.of({ datum: detailedJson(out.datum.inline) }) }),
        );
      if (out.scriptRef !== undefined) content.set('script_ref', scriptRefValue(out.scriptRef));
      coin.content = content;
    }
    return coin;
  });
  return { ...spell, tx: { ...spell.tx, ins: perm.map((p) => inputs[p]!), coins } };
}

export function extractAndVerifyCardanoTx(bytes: Uint8Array, mock: boolean): NormalizedSpell {
  const tx = parseCardanoTx(bytes);
  const { spell, proof } = findCardanoSpell(tx);
  if (spell.mock && !mock) throw new CharmsError('PROOF_INVALID', 'spell is a mock, but we are not in mock mode');
  const filled = fillFromCardanoTx(spell, tx);
  verifyFilledSpell(filled, proof, mock);
  return filled;
}
