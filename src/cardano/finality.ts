/**
 * The Cardano finality-proof form `{tx, signature}`: the Scrolls finality key's Ed25519 signature
 * over the transaction body hash certifies the transaction as final (needed for beaming).
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { blake2b } from '@noble/hashes/blake2.js';
import { CharmsError } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import { parseCardanoTx } from './tx.js';
import { FINALITY_VKEY_HEX } from './scripts-data.js';

/** True iff `signature` (64 bytes) is the finality key's signature over the tx body hash. */
export function verifyCardanoFinality(txBytes: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) throw new CharmsError('INVALID_INPUT', `finality signature: expected 64 bytes, got ${signature.length}`);
  const bodyHash = blake2b(parseCardanoTx(txBytes).bodyBytes, { dkLen: 32 });
  try {
    return ed25519.verify(signature, bodyHash, fromHex(FINALITY_VKEY_HEX));
  } catch {
    return false;
  }
}
