/**
 * `NativeOutput.content` of a Cardano output (protocol V11+): the reference's `OutputContent`
 * (CML serde form) as Charms `Data` — a map with text keys in field order `multiasset`, then
 * `datum` and `script_ref` only when present:
 * - `multiasset`: policy hex → asset name hex → quantity, both levels sorted by raw bytes;
 * - `datum`: `{"Hash": {"datum_hash": hex}}` or `{"Datum": {"datum": <detailed-schema JSON>}}`;
 * - `script_ref`: `{"PlutusV1|V2|V3": {"script": hex}}` (native scripts: not supported yet).
 * The proof commits to these bytes, so the shape must be exact.
 */
import { CharmsError } from '../errors.js';
import { ValueMap, type Value } from '../codec/value.js';
import { compareBytes, fromHex, toHex } from '../util/bytes.js';
import { plutusDataToDetailedJson } from './plutus-data.js';
import type { Assets, CardanoOutput } from './tx.js';

const byBytes = (a: string, b: string): number => compareBytes(fromHex(a), fromHex(b));

export function assetsToValue(assets: Assets): ValueMap {
  return new ValueMap(
    [...assets.keys()].sort(byBytes).map((p) => {
      const inner = assets.get(p)!;
      return [p, new ValueMap([...inner.keys()].sort(byBytes).map((a) => [a, inner.get(a)!]))];
    }),
  );
}

/**
 * `MultiAsset::checked_sub`: `have − take`; every asset of `take` must be present with at least
 * that quantity (else INVALID_SPELL); zero entries and then-empty policies are dropped.
 */
export function subtractAssets(have: Assets, take: Assets, where: string): Assets {
  const rest: Assets = new Map([...have].map(([p, m]) => [p, new Map(m)]));
  for (const [p, m] of take)
    for (const [a, q] of m) {
      const cur = rest.get(p)?.get(a);
      if (cur === undefined || cur < q) throw new CharmsError('INVALID_SPELL', `${where}: native token ${p}.${a} is short of its charms (${cur ?? 0n} < ${q})`);
      if (cur === q) {
        rest.get(p)!.delete(a);
        if (rest.get(p)!.size === 0) rest.delete(p);
      } else rest.get(p)!.set(a, cur - q);
    }
  return rest;
}

function scriptRefToValue(s: Value): Value {
  if (!Array.isArray(s) || s.length !== 2 || typeof s[0] !== 'bigint') throw new CharmsError('INVALID_TX', 'bad script reference');
  if (s[0] === 0n) throw new CharmsError('UNSUPPORTED', 'native script references in Cardano outputs are not supported yet');
  const name = ({ 1: 'PlutusV1', 2: 'PlutusV2', 3: 'PlutusV3' } as Record<string, string>)[String(s[0])];
  if (name === undefined || !(s[1] instanceof Uint8Array)) throw new CharmsError('INVALID_TX', 'bad script reference');
  return new ValueMap([[name, ValueMap.of({ script: toHex(s[1]) })]]);
}

/** The content value of an output whose remaining (non-charm) assets are `rest`. */
export function outputContentValue(out: CardanoOutput, rest: Assets): ValueMap {
  const content = new ValueMap([['multiasset', assetsToValue(rest)]]);
  if (out.datum !== undefined)
    content.set(
      'datum',
      'hash' in out.datum
        ? ValueMap.of({ Hash: ValueMap.of({ datum_hash: toHex(out.datum.hash) }) })
        : ValueMap.of({ Datum: ValueMap.of({ datum: plutusDataToDetailedJson(out.datum.inline) }) }),
    );
  if (out.scriptRef !== undefined) content.set('script_ref', scriptRefToValue(out.scriptRef));
  return content;
}
