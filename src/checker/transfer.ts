/** `is_simple_transfer`: token amounts balance, or NFT states are preserved (as multisets). */
import { valueEquals } from '../codec/value.js';
import { appEquals, type App, type Data } from '../model/primitives.js';
import type { AppTransaction, Charms } from './app-input.js';

const valuesOf = (app: App, list: Charms[]): Data[] =>
  list.flatMap((c) => c.filter(([a]) => appEquals(a, app)).map(([, d]) => d));

/** Sum of token amounts; undefined when an amount is not a u64 or the sum overflows. */
export function sumTokenAmount(app: App, list: Charms[]): bigint | undefined {
  let total = 0n;
  for (const d of valuesOf(app, list)) {
    if (typeof d !== 'bigint' || d < 0n || d >= 1n << 64n) return undefined;
    total += d;
    if (total >= 1n << 64n) return undefined;
  }
  return total;
}

export function tokenAmountsBalanced(app: App, tx: AppTransaction): boolean {
  const i = sumTokenAmount(app, tx.ins.map(([, c]) => c));
  const o = sumTokenAmount(app, tx.outs);
  return i !== undefined && o !== undefined && i === o;
}

export function nftStatePreserved(app: App, tx: AppTransaction): boolean {
  const ins = valuesOf(app, tx.ins.map(([, c]) => c));
  const outs = valuesOf(app, tx.outs);
  if (ins.length !== outs.length) return false;
  const used = outs.map(() => false);
  return ins.every((d) => {
    const j = outs.findIndex((o, k) => !used[k] && valueEquals(o, d));
    if (j < 0) return false;
    used[j] = true;
    return true;
  });
}

export function isSimpleTransfer(app: App, tx: AppTransaction): boolean {
  if (app.tag === 't') return tokenAmountsBalanced(app, tx);
  if (app.tag === 'n') return nftStatePreserved(app, tx);
  return false;
}
