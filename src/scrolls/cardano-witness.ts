/**
 * What we accept back from the Scrolls Cardano canister's `sign`: the same transaction with one
 * more vkey witness. The body (hence the tx id), `is_valid` and the auxiliary data must be byte
 * for byte the ones we sent, every witness we sent must still be there, and the added witness
 * must be the Scrolls key's Ed25519 signature over the body hash.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { CharmsError } from '../errors.js';
import { CborReader, encodeCbor } from '../codec/cbor.js';
import { Tagged, type ValueMap, type Value } from '../codec/value.js';
import { equalBytes, toHex } from '../util/bytes.js';
import { cardanoTxHash, parseCardanoTx } from '../cardano/tx.js';

interface TxParts {
  body: Uint8Array;
  witnessSet: ValueMap;
  /** `is_valid` and the auxiliary data, as raw bytes. */
  tail: Uint8Array;
}

function partsOf(bytes: Uint8Array): TxParts {
  const tx = parseCardanoTx(bytes); // validates the shape (INVALID_TX otherwise)
  const r = new CborReader(bytes);
  r.head();
  r.value();
  r.value();
  return { body: tx.bodyBytes, witnessSet: tx.witnessSet, tail: bytes.slice(r.pos) };
}

const untag = (v: Value | undefined): Value | undefined => (v instanceof Tagged && v.tag === 258n ? v.value : v);

/** The vkey witnesses `[vkey, signature]` of a witness set (key 0). */
function vkeyWitnesses(ws: ValueMap): [Uint8Array, Uint8Array][] {
  const list = untag(ws.entries.find(([k]) => k === 0n)?.[1]);
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw misbehaved('its vkey witnesses are not a list');
  return list.map((w) => {
    if (!Array.isArray(w) || w.length !== 2 || !(w[0] instanceof Uint8Array) || !(w[1] instanceof Uint8Array))
      throw misbehaved('a vkey witness is not [vkey, signature]');
    return [w[0], w[1]];
  });
}

const misbehaved = (what: string) => new CharmsError('UPSTREAM_FAILED', `the Scrolls canister's signed transaction was refused: ${what}`);

/**
 * Throws unless `signed` is `unsigned` plus the Scrolls vkey witness (see above). Witness-set
 * entries other than the vkey witnesses are compared after decoding (the canister re-encodes the
 * set it appends to; our codec writes equal values the same way).
 */
export function checkScrollsWitness(unsigned: Uint8Array, signed: Uint8Array, scrollsVkey: Uint8Array): void {
  const before = partsOf(unsigned);
  let after: TxParts;
  try {
    after = partsOf(signed);
  } catch (e) {
    throw misbehaved(`it is not a Cardano transaction (${(e as Error).message})`);
  }
  if (!equalBytes(before.body, after.body)) throw misbehaved('the transaction body changed');
  if (!equalBytes(before.tail, after.tail)) throw misbehaved('is_valid or the auxiliary data changed');
  const others = (ws: ValueMap) =>
    ws.entries
      .filter(([k]) => k !== 0n)
      .map(([k, v]) => `${String(k)}=${toHex(encodeCbor(v))}`)
      .sort();
  if (others(before.witnessSet).join() !== others(after.witnessSet).join()) throw misbehaved('witnesses other than vkey witnesses changed');
  const had = vkeyWitnesses(before.witnessSet);
  const has = vkeyWitnesses(after.witnessSet);
  for (const [vk, sig] of had)
    if (!has.some(([v, s]) => equalBytes(v, vk) && equalBytes(s, sig))) throw misbehaved(`the witness of key ${toHex(vk)} was dropped`);
  const bodyHash = cardanoTxHash(parseCardanoTx(signed));
  const added = has.filter(([vk]) => equalBytes(vk, scrollsVkey));
  if (added.length === 0) throw misbehaved(`no vkey witness of the Scrolls key ${toHex(scrollsVkey)}`);
  for (const [, sig] of added) {
    let ok = false;
    try {
      ok = sig.length === 64 && ed25519.verify(sig, bodyHash, scrollsVkey, { zip215: false });
    } catch {
      ok = false;
    }
    if (!ok) throw misbehaved('the Scrolls witness signature does not verify over the body hash');
  }
}
