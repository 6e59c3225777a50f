/**
 * Cardano transactions (Conway CDDL `[body, witness_set, is_valid, auxiliary_data]`): a structural
 * parse that keeps the raw body bytes (the txid is blake2b-256 of them, byte-reversed as Charms
 * stores it).
 */
import { blake2b } from '@noble/hashes/blake2.js';
import { CharmsError } from '../errors.js';
import { CborReader } from '../codec/cbor.js';
import { ValueMap, type Value } from '../codec/value.js';
import { reversed } from '../util/bytes.js';

export interface CardanoTx {
  body: ValueMap;
  bodyBytes: Uint8Array;
  witnessSet: Value;
  isValid: boolean;
  auxiliaryData: Value;
}

const bad = (m: string) => new CharmsError('INVALID_TX', `invalid Cardano transaction: ${m}`);

export function parseCardanoTx(bytes: Uint8Array): CardanoTx {
  const r = new CborReader(bytes);
  let head;
  try {
    head = r.head();
  } catch {
    throw bad('not CBOR');
  }
  if (head.major !== 4 || head.arg !== 4n) throw bad('expected an array of 4 items');
  const start = r.pos;
  let body: Value;
  let witnessSet: Value;
  let isValid: Value;
  let aux: Value;
  let bodyBytes: Uint8Array;
  try {
    body = r.value();
    bodyBytes = bytes.slice(start, r.pos);
    witnessSet = r.value();
    isValid = r.value();
    aux = r.value();
  } catch (e) {
    throw bad((e as Error).message);
  }
  if (!r.done) throw bad('trailing bytes');
  if (!(body instanceof ValueMap)) throw bad('body is not a map');
  if (typeof isValid !== 'boolean') throw bad('is_valid is not a boolean');
  return { body, bodyBytes, witnessSet, isValid, auxiliaryData: aux };
}

/** The tx hash (blake2b-256 of the body) in Charms' internal (reversed) order. */
export const cardanoTxid = (tx: CardanoTx): Uint8Array => reversed(blake2b(tx.bodyBytes, { dkLen: 32 }));
