/**
 * The Cardano finality-proof form `{tx, signature}` (beaming sources): the Scrolls finality key's
 * Ed25519 signature over the 32-byte tx body hash certifies the transaction as final (the Scrolls
 * canister checks a Mithril transaction proof before signing). Nothing else is checked
 * client-side, as in the reference. Browser-safe: no Node built-ins.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { CharmsError } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import { cardanoTxHash, parseCardanoTx } from './tx.js';
import { FINALITY_VKEY_HEX } from './scripts-data.js';

const FINALITY_VKEY = fromHex(FINALITY_VKEY_HEX);

/**
 * Throws unless `signature` (64 bytes) is the finality key's signature over the tx body hash:
 * INVALID_TX for unparsable tx bytes, INVALID_INPUT for a signature that is not 64 bytes,
 * PROOF_INVALID for a wrong signature. `vkey` is the protocol's finality key unless a test or a
 * local replica of the canister names another.
 */
export function assertCardanoFinality(txBytes: Uint8Array, signature: Uint8Array, vkey: Uint8Array = FINALITY_VKEY): void {
  if (signature.length !== 64) throw new CharmsError('INVALID_INPUT', `finality signature: expected 64 bytes, got ${signature.length}`);
  const bodyHash = cardanoTxHash(parseCardanoTx(txBytes));
  let ok = false;
  try {
    // strict RFC 8032 verification (no ZIP-215 leniency): the signer is a fixed honest key
    ok = ed25519.verify(signature, bodyHash, vkey, { zip215: false });
  } catch {
    ok = false;
  }
  if (!ok) throw new CharmsError('PROOF_INVALID', 'finality signature verification failed');
}

/**
 * True iff `signature` is the finality key's signature over the tx body hash (the reference's
 * `proven_final`). Throws only for unparsable tx bytes or a signature that is not 64 bytes.
 */
export function verifyCardanoFinality(txBytes: Uint8Array, signature: Uint8Array): boolean {
  try {
    assertCardanoFinality(txBytes, signature);
    return true;
  } catch (e) {
    if (e instanceof CharmsError && e.code === 'PROOF_INVALID') return false;
    throw e;
  }
}
