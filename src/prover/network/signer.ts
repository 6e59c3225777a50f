/**
 * The Prover Network account: a secp256k1 key (NETWORK_PRIVATE_KEY), its Ethereum-style address,
 * and EIP-191 `personal_sign` signatures as the SP1 SDK (alloy) makes them. The key stays inside
 * this object: it is never logged, printed or returned.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { CharmsError } from '../../errors.js';
import { concatBytes, toHex, utf8 } from '../../util/bytes.js';

/** keccak256("\x19Ethereum Signed Message:\n" + decimal(len) + message). */
export function eip191Digest(message: Uint8Array): Uint8Array {
  return keccak_256(concatBytes(utf8(`\x19Ethereum Signed Message:\n${message.length}`), message));
}

/** The address of an uncompressed or compressed public key: keccak256(x ‖ y)[12..]. */
function addressOf(publicKey: Uint8Array): Uint8Array {
  const uncompressed = secp256k1.Point.fromBytes(publicKey).toBytes(false);
  return keccak_256(uncompressed.subarray(1)).subarray(12);
}

/** Recovers the signer's address from a 65-byte `r‖s‖v` signature (v = 27/28, or 0/1). */
export function recoverAddress(message: Uint8Array, signature: Uint8Array): Uint8Array {
  if (signature.length !== 65) throw new CharmsError('INVALID_INPUT', `signature must be 65 bytes, got ${signature.length}`);
  const v = signature[64]!;
  const parity = v >= 27 ? v - 27 : v;
  if (parity !== 0 && parity !== 1) throw new CharmsError('INVALID_INPUT', `bad signature recovery byte ${v}`);
  const rec = concatBytes(Uint8Array.of(parity), signature.subarray(0, 64));
  return addressOf(secp256k1.recoverPublicKey(rec, eip191Digest(message), { prehash: false }));
}

export const addressHex = (a: Uint8Array): string => `0x${toHex(a)}`;

export class NetworkSigner {
  readonly #key: Uint8Array;
  readonly address: Uint8Array;

  constructor(privateKeyHex: string) {
    const hex = privateKeyHex.trim().replace(/^0x/i, '');
    // Never echo the value: the message names the variable only.
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new CharmsError('CONFIG', 'NETWORK_PRIVATE_KEY must be 32 bytes of hex (64 hex digits, optional 0x)');
    const key = Uint8Array.from(hex.match(/../g)!.map((x) => parseInt(x, 16)));
    if (!secp256k1.utils.isValidSecretKey(key)) throw new CharmsError('CONFIG', 'NETWORK_PRIVATE_KEY is not a valid secp256k1 private key');
    this.#key = key;
    this.address = addressOf(secp256k1.getPublicKey(key, false));
  }

  /** EIP-191 signature as alloy's `Signature::as_bytes`: r ‖ s ‖ (27 + yParity). Deterministic (RFC 6979). */
  sign(message: Uint8Array): Uint8Array {
    const rec = secp256k1.sign(eip191Digest(message), this.#key, { prehash: false, format: 'recovered' });
    return concatBytes(rec.subarray(1, 65), Uint8Array.of(27 + rec[0]!));
  }

  /**
   * The `CreateArtifact` signature over the ASCII bytes `create_artifact`. The SDK's `sign_message`
   * adds 27 to the already-27-based last byte, so the wire byte is 54 or 55; copied as it is.
   */
  signArtifactRequest(): Uint8Array {
    const s = this.sign(utf8('create_artifact'));
    s[64] = s[64]! + 27;
    return s;
  }

  toJSON(): unknown {
    return { address: addressHex(this.address) };
  }
}
