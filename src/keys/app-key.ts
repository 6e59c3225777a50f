/**
 * App keys and binary signatures for versioned apps: BIP-340 Schnorr over secp256k1.
 * vk = SHA-256(x-only public key); a binary is authorized by a signature over SHA-256(wasm).
 */
import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '../util/sha256.js';
import { CharmsError } from '../errors.js';
import { equalBytes, fromHex, toHex } from '../util/bytes.js';
import type { AppSignature } from '../model/spell.js';

export interface AppKey {
  public_key: Uint8Array;
  secret_key: Uint8Array;
  vk: Uint8Array;
}

export const vkOfPublicKey = (publicKey: Uint8Array): Uint8Array => sha256(publicKey);
export const vkOfBinary = (wasm: Uint8Array): Uint8Array => sha256(wasm);

export function appKeyFromSecret(secret: Uint8Array): AppKey {
  if (secret.length !== 32) throw new CharmsError('INVALID_INPUT', 'secret_key: expected 32 bytes (64 hex characters)');
  let pub: Uint8Array;
  try {
    pub = schnorr.getPublicKey(secret);
  } catch (e) {
    throw new CharmsError('INVALID_INPUT', 'secret_key: not a valid secp256k1 secret key', { cause: e });
  }
  return { public_key: pub, secret_key: secret, vk: vkOfPublicKey(pub) };
}

export const generateAppKey = (): AppKey => appKeyFromSecret(schnorr.utils.randomSecretKey());

/** The key file's JSON text, exactly as the reference writes it (pretty, no trailing newline). */
export const appKeyFileText = (k: AppKey): string =>
  `{\n  "public_key": "${toHex(k.public_key)}",\n  "secret_key": "${toHex(k.secret_key)}",\n  "vk": "${toHex(k.vk)}"\n}`;

/** Reads an app key file; checks that the public key and vk agree with the secret key. */
export function parseAppKeyFile(text: string, file = 'app key file'): AppKey {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw new CharmsError('INVALID_INPUT', `${file}: not valid JSON (expected {public_key, secret_key, vk})`, { cause: e });
  }
  const o = j as Record<string, unknown>;
  if (typeof o?.secret_key !== 'string') throw new CharmsError('INVALID_INPUT', `${file}: missing field secret_key`);
  const key = appKeyFromSecret(fromHex(o.secret_key, `${file}: secret_key`, 32));
  if (typeof o.public_key === 'string' && !equalBytes(fromHex(o.public_key, `${file}: public_key`, 32), key.public_key))
    throw new CharmsError('INVALID_INPUT', `${file}: public_key does not match secret_key`);
  return key;
}

/** Signs SHA-256(wasm) with fresh random aux data (as the reference CLI does). */
export function signBinary(key: AppKey, wasm: Uint8Array, auxRand?: Uint8Array): AppSignature {
  const signature = schnorr.sign(sha256(wasm), key.secret_key, auxRand);
  return { public_key: key.public_key, signature };
}

/** True iff `sig` is a valid BIP-340 signature over SHA-256(wasm) by `sig.public_key`. */
export function verifyBinarySignature(sig: AppSignature, wasm: Uint8Array): boolean {
  try {
    return schnorr.verify(sig.signature, sha256(wasm), sig.public_key);
  } catch {
    return false;
  }
}

/** The reference's check for a `vk → AppSignature` entry: vk = SHA-256(public key) and a valid signature. */
export function checkAppSignature(vk: Uint8Array, sig: AppSignature, wasm: Uint8Array): void {
  if (!equalBytes(vkOfPublicKey(sig.public_key), vk))
    throw new CharmsError('INVALID_INPUT', `app signature for vk ${toHex(vk)}: SHA-256(public_key) does not equal the vk`);
  if (!verifyBinarySignature(sig, wasm)) throw new CharmsError('INVALID_INPUT', `app signature for vk ${toHex(vk)}: signature does not verify for this binary`);
}

/** A public key file: 64 hex characters (optional 0x), or an app-key JSON file. */
export function parsePublicKeyFile(text: string): Uint8Array {
  const t = text.trim();
  if (t.startsWith('{')) {
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(t);
    } catch (e) {
      throw new CharmsError('INVALID_INPUT', 'public key file: not valid JSON', { cause: e });
    }
    if (typeof o.public_key !== 'string') throw new CharmsError('INVALID_INPUT', 'public key file: missing field public_key');
    return fromHex(o.public_key, 'public_key', 32);
  }
  return fromHex(t, 'public key', 32);
}
