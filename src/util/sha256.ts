/**
 * SHA-256: Node's native hash where there is one (hashing an app binary or a large transaction
 * with the pure-JS code costs milliseconds in a fresh process, before the JIT warms up), else
 * @noble/hashes (browsers). Both give the same bytes; the tests compare them.
 */
import { sha256 as pureSha256 } from '@noble/hashes/sha2.js';

type NodeCrypto = typeof import('node:crypto');
// through globalThis, so that browser bundlers see no Node global to polyfill (Node ≥ 20.16)
const host = globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } };
const nodeCrypto = host.process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;

export const sha256 = (data: Uint8Array): Uint8Array => (nodeCrypto ? new Uint8Array(nodeCrypto.createHash('sha256').update(data).digest()) : pureSha256(data));

/** SHA-256 of the concatenation of `parts`, without building it where the native hash can stream. */
export function sha256Parts(parts: readonly Uint8Array[]): Uint8Array {
  if (!nodeCrypto) {
    let n = 0;
    for (const p of parts) n += p.length;
    const all = new Uint8Array(n);
    n = 0;
    for (const p of parts) {
      all.set(p, n);
      n += p.length;
    }
    return pureSha256(all);
  }
  const h = nodeCrypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

export { pureSha256 };
