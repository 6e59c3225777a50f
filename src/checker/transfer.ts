/**
 * `is_simple_transfer` (charms-data): an app's charms are only moved, so its contract need not run.
 * Tokens (`t`): the u64 amounts in the inputs sum to the amounts in the outputs. NFTs (`n`): the
 * multiset of states in the inputs equals the multiset in the outputs. Any other tag: never.
 */
import { CharmsError } from '../errors.js';
import { valueEquals } from '../codec/value.js';
import { appEquals, appToString, type App, type Data } from '../model/primitives.js';
import type { Charms } from '../model/spell.js';
import type { AppTransaction } from './app-input.js';

const U64_LIMIT = 1n << 64n;

/** Is `d` what `Data::value::<u64>()` accepts: a CBOR unsigned integer below 2^64. */
export const isU64 = (d: Data): d is bigint => typeof d === 'bigint' && d >= 0n && d < U64_LIMIT;

const valuesOf = (app: App, list: Charms[]): Data[] => list.flatMap((c) => c.filter(([a]) => appEquals(a, app)).map(([, d]) => d));

/**
 * `sum_token_amount`: the sum of the app's amounts, or `undefined` where the reference returns an
 * error (a value that is not a u64; once in error, later values are not looked at). The reference
 * is built with overflow checks, so a sum beyond u64 aborts it: that throws here.
 */
export function sumTokenAmount(app: App, list: Charms[]): bigint | undefined {
  let total = 0n;
  for (const d of valuesOf(app, list)) {
    if (!isU64(d)) return undefined;
    total += d;
    if (total >= U64_LIMIT)
      throw new CharmsError('INVALID_SPELL', `token amounts of app ${appToString(app)} sum beyond u64 (the reference aborts on this overflow)`);
  }
  return total;
}

function tokenAmountsBalanced(app: App, tx: AppTransaction): boolean {
  // Both sums are computed (a tuple in the reference), inputs first.
  const i = sumTokenAmount(
    app,
    tx.ins.map(([, c]) => c),
  );
  const o = sumTokenAmount(app, tx.outs);
  return i !== undefined && o !== undefined && i === o;
}

function nftStatePreserved(app: App, tx: AppTransaction): boolean {
  const ins = valuesOf(
    app,
    tx.ins.map(([, c]) => c),
  );
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
