/**
 * Chain-tagged transactions (`Tx`) and the prover's `ProveRequest`, in JSON and CBOR.
 * In JSON the spell travels as the hex of its CBOR, private inputs as hex CBOR, binaries as
 * base64; in CBOR everything is inline (see wire-formats §2.2).
 */
import { base64 } from '@scure/base';
import { ValueMap, type Value } from '../codec/value.js';
import { decodeCbor, encodeCbor } from '../codec/cbor.js';
import { fromHex, toHex } from '../util/bytes.js';
import {
  type App,
  type B32,
  type Data,
  type UtxoId,
  appMapToValue,
  appFromValue,
  asF64,
  asMap,
  asString,
  asArray,
  b32FromValue,
  b32ToValue,
  bytesFromBinary,
  bytesToBinary,
  expected,
  invalid,
  sortAppEntries,
  utxoIdFromValue,
  utxoIdToValue,
} from './primitives.js';
import {
  type AppSignature,
  type BeamSource,
  type NormalizedSpell,
  appSignatureFromValue,
  appSignatureToValue,
  b32MapFromValue,
  b32MapToValue,
  beamSourceFromValue,
  beamSourceToValue,
  spellFromCbor,
  spellFromValue,
  spellToValue,
  u32MapFromValue,
  u32MapToValue,
} from './spell.js';

export type Chain = 'bitcoin' | 'cardano';

export function parseChain(s: string, path = 'chain'): Chain {
  if (s === 'bitcoin' || s === 'cardano') return s;
  throw invalid(path, `unknown chain ${JSON.stringify(s)}, expected bitcoin or cardano`);
}

/** A transaction tagged with its chain; the inner forms stay hex text in both faces. */
export type ChainTx = { chain: 'bitcoin'; hex: string; proof?: { proof: string; headers: string[] } } | { chain: 'cardano'; hex: string; signature?: string };

export function chainTxToValue(t: ChainTx): Value {
  let inner: Value = t.hex;
  if (t.chain === 'bitcoin' && t.proof)
    inner = new ValueMap([
      ['tx', t.hex],
      ['proof', t.proof.proof],
      ['headers', [...t.proof.headers]],
    ]);
  if (t.chain === 'cardano' && t.signature !== undefined)
    inner = new ValueMap([
      ['tx', t.hex],
      ['signature', t.signature],
    ]);
  return new ValueMap([[t.chain, inner]]);
}

const hexText = (v: Value, path: string): string => {
  const s = asString(v, path);
  fromHex(s, path); // validate
  return s.toLowerCase();
};

export function chainTxFromValue(v: Value, path: string): ChainTx {
  const m = asMap(v, path);
  if (m.entries.length !== 1) throw invalid(path, 'expected a map with one key, bitcoin or cardano');
  const [k, inner] = m.entries[0]!;
  if (k !== 'bitcoin' && k !== 'cardano') throw expected(`${path} key`, '`bitcoin` or `cardano`', k);
  if (typeof inner === 'string') return { chain: k, hex: hexText(inner, `${path}.${k}`) };
  const im = asMap(inner, `${path}.${k}`);
  const tx = im.get('tx');
  if (tx === undefined) throw invalid(`${path}.${k}`, 'missing field `tx`');
  if (k === 'bitcoin') {
    const proof = im.get('proof');
    const headers = im.get('headers');
    if (proof === undefined || headers === undefined) throw invalid(`${path}.bitcoin`, 'expected {tx, proof, headers}');
    return {
      chain: 'bitcoin',
      hex: hexText(tx, `${path}.bitcoin.tx`),
      proof: {
        proof: hexText(proof, `${path}.bitcoin.proof`),
        headers: asArray(headers, `${path}.bitcoin.headers`).map((h, i) => hexText(h, `${path}.bitcoin.headers[${i}]`)),
      },
    };
  }
  const sig = im.get('signature');
  if (sig === undefined) throw invalid(`${path}.cardano`, 'expected {tx, signature}');
  return { chain: 'cardano', hex: hexText(tx, `${path}.cardano.tx`), signature: hexText(sig, `${path}.cardano.signature`) };
}

// ------------------------------------------------------------------------------ ProveRequest

/**
 * What a spell is checked against: the one bundle `checkSpell`, the prove pipeline and the CLI
 * share (field names as in the reference's `ProveRequest`, which is this plus the prover's own
 * fields).
 */
export interface SpellInputs {
  spell: NormalizedSpell;
  app_private_inputs: [App, Data][];
  /** Input index → the beaming source of that input. */
  tx_ins_beamed_source_utxos: Map<number, BeamSource>;
  /** App binaries, each keyed by its vk (SHA-256 of the binary). */
  binaries: [B32, Uint8Array][];
  app_signatures: [B32, AppSignature][];
  /** The transactions that created the spell's inputs and refs (and beaming sources). */
  prev_txs: ChainTx[];
  chain: Chain;
}

/** SpellInputs with only the spell, its prev txs and chain: no binaries, private inputs, signatures or beaming. */
export const bareSpellInputs = (spell: NormalizedSpell, prev_txs: ChainTx[], chain: Chain): SpellInputs => ({
  spell,
  app_private_inputs: [],
  tx_ins_beamed_source_utxos: new Map(),
  binaries: [],
  app_signatures: [],
  prev_txs,
  chain,
});

/** A spell's inputs plus what the prover needs to build the transaction (`POST /spells/prove`). */
export interface ProveRequest extends SpellInputs {
  change_address: string;
  fee_rate: number;
  collateral_utxo?: UtxoId;
}

export function proveRequestToValue(r: ProveRequest, hr: boolean): ValueMap {
  const m = new ValueMap();
  m.set('spell', hr ? toHex(encodeCbor(spellToValue(r.spell, false))) : spellToValue(r.spell, false));
  if (r.app_private_inputs.length > 0)
    m.set(
      'app_private_inputs',
      appMapToValue(r.app_private_inputs, hr, (d) => (hr ? toHex(encodeCbor(d)) : d)),
    );
  if (r.tx_ins_beamed_source_utxos.size > 0)
    m.set(
      'tx_ins_beamed_source_utxos',
      u32MapToValue(r.tx_ins_beamed_source_utxos, (b) => beamSourceToValue(b, hr)),
    );
  if (r.binaries.length > 0)
    m.set(
      'binaries',
      b32MapToValue(r.binaries, hr, (b) => (hr ? base64.encode(b) : bytesToBinary(b))),
    );
  if (r.app_signatures.length > 0)
    m.set(
      'app_signatures',
      b32MapToValue(r.app_signatures, hr, (s) => appSignatureToValue(s, hr)),
    );
  if (r.prev_txs.length > 0) m.set('prev_txs', r.prev_txs.map(chainTxToValue));
  m.set('change_address', r.change_address);
  m.set('fee_rate', r.fee_rate);
  m.set('chain', r.chain);
  if (r.collateral_utxo) m.set('collateral_utxo', utxoIdToValue(r.collateral_utxo, hr));
  return m;
}

function decodeHexCbor(v: Value, path: string): Value {
  const bytes = fromHex(asString(v, path), path);
  try {
    return decodeCbor(bytes);
  } catch (e) {
    throw invalid(path, 'not valid hex-encoded CBOR', e);
  }
}

export function proveRequestFromValue(v: Value, hr: boolean, path = 'request'): ProveRequest {
  const m = asMap(v, path);
  const need = (k: string): Value => {
    const x = m.get(k);
    if (x === undefined) throw invalid(path, `missing field \`${k}\``);
    return x;
  };
  const spellV = need('spell');
  // JSON: the spell is hex of its CBOR; we also accept an inline object (the docs show one).
  const spell =
    hr && typeof spellV === 'string'
      ? spellFromCbor(fromHex(spellV, 'spell'), 'spell') // read as the reference's util::read reads it
      : spellFromValue(spellV, hr && !(typeof spellV === 'string'), 'spell');
  const opt = (k: string): Value | undefined => {
    const x = m.get(k);
    return x === null ? undefined : x;
  };
  const api = opt('app_private_inputs');
  const beams = opt('tx_ins_beamed_source_utxos');
  const bins = opt('binaries');
  const sigs = opt('app_signatures');
  const prev = opt('prev_txs');
  const fee = opt('fee_rate');
  const coll = opt('collateral_utxo');
  const chain = parseChain(asString(need('chain'), 'chain'));
  const req: ProveRequest = {
    spell,
    app_private_inputs:
      api === undefined
        ? []
        : sortAppEntries(
            asMap(api, 'app_private_inputs').entries.map(([k, x]) => {
              const app = appFromValue(k, hr, 'app_private_inputs key');
              return [app, hr ? decodeHexCbor(x, `app_private_inputs.${String(k)}`) : x] as [App, Data];
            }),
            'app_private_inputs',
          ),
    tx_ins_beamed_source_utxos:
      beams === undefined ? new Map() : u32MapFromValue(beams, hr, 'tx_ins_beamed_source_utxos', (x, p) => beamSourceFromValue(x, hr, p)),
    binaries:
      bins === undefined
        ? []
        : b32MapFromValue(bins, hr, 'binaries', (x, p) => {
            if (!hr) return bytesFromBinary(x, p);
            try {
              return base64.decode(asString(x, p));
            } catch (e) {
              throw invalid(p, 'not valid standard base64', e);
            }
          }),
    app_signatures: sigs === undefined ? [] : b32MapFromValue(sigs, hr, 'app_signatures', (x, p) => appSignatureFromValue(x, hr, p)),
    prev_txs: prev === undefined ? [] : asArray(prev, 'prev_txs').map((x, i) => chainTxFromValue(x, `prev_txs[${i}]`)),
    change_address: asString(need('change_address'), 'change_address'),
    fee_rate: fee === undefined ? 0 : asF64(fee, 'fee_rate', hr),
    chain,
  };
  if (coll !== undefined) req.collateral_utxo = utxoIdFromValue(coll, hr, 'collateral_utxo');
  return req;
}

export { b32FromValue, b32ToValue };
