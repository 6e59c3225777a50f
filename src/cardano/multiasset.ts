/** Multi-asset maths of the Cardano builder: sums, differences and the canonical encoding. */
import { CharmsError } from '../errors.js';
import type { CborWriter } from '../codec/cbor.js';
import { compareBytes, fromHex } from '../util/bytes.js';
import type { Assets } from './tx.js';

export const addAsset = (m: Assets, p: string, a: string, q: bigint): void => {
  const inner = m.get(p) ?? new Map<string, bigint>();
  inner.set(a, (inner.get(a) ?? 0n) + q);
  m.set(p, inner);
};

export const addAll = (into: Assets, from: Assets): void => {
  for (const [p, m] of from) for (const [a, q] of m) addAsset(into, p, a, q);
};

export const byHexBytes = (a: string, b: string): number => compareBytes(fromHex(a), fromHex(b));

/** A multi-asset map, both levels sorted by raw bytes (canonical CBOR for byte strings of these lengths). */
export function writeMultiAsset(w: CborWriter, m: Assets, signed = false): void {
  const policies = [...m.keys()].filter((p) => m.get(p)!.size > 0).sort(byHexBytes);
  w.mapHeader(policies.length);
  for (const p of policies) {
    w.bytes(fromHex(p));
    const inner = m.get(p)!;
    const names = [...inner.keys()].sort(byHexBytes);
    w.mapHeader(names.length);
    for (const a of names) {
      w.bytes(fromHex(a));
      const q = inner.get(a)!;
      if (!signed && q < 0n) throw new CharmsError('INTERNAL', 'negative output asset');
      w.int(q);
    }
  }
}

/** `Σ plus − Σ minus`, zero quantities and then-empty policies dropped (the builder's mint map). */
export function netAssets(plus: Assets[], minus: Assets[]): Assets {
  const inAssets: Assets = new Map();
  minus.forEach((m) => addAll(inAssets, m));
  const mint: Assets = new Map();
  plus.forEach((m) => addAll(mint, m));
  for (const [pol, m] of inAssets) for (const [n, q] of m) addAsset(mint, pol, n, -q);
  for (const [pol, m] of [...mint]) {
    for (const [n, q] of [...m]) if (q === 0n) m.delete(n);
    if (m.size === 0) mint.delete(pol);
  }
  return mint;
}
