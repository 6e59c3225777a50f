/**
 * The spell-query response (the former service's denormalized `$NNNN` shape):
 * `{version, apps: {"$0000": app}, public_args?, ins: [{utxo_id}], refs?, outs: [{charms?, beam_to?}]}`.
 */
import { ValueMap, type Value } from '../codec/value.js';
import { toHex } from '../util/bytes.js';
import { appToString, utxoIdToString } from '../model/primitives.js';
import type { NormalizedSpell } from '../model/spell.js';

/** `$` + the app index padded to 4 digits (`$10000` past 9999). */
export const appRef = (i: number): string => `$${String(i).padStart(4, '0')}`;

export function spellQueryValue(s: NormalizedSpell): ValueMap {
  const m = new ValueMap();
  m.set('version', BigInt(s.version));
  m.set('apps', new ValueMap(s.app_public_inputs.map(([a], i) => [appRef(i), appToString(a)])));
  const publicArgs = s.app_public_inputs.map(([, d], i) => [appRef(i), d] as [Value, Value]).filter(([, d]) => d !== null);
  if (publicArgs.length > 0) m.set('public_args', new ValueMap(publicArgs));
  m.set('ins', (s.tx.ins ?? []).map((u) => ValueMap.of({ utxo_id: utxoIdToString(u) })));
  if (s.tx.refs && s.tx.refs.length > 0) m.set('refs', s.tx.refs.map((u) => ValueMap.of({ utxo_id: utxoIdToString(u) })));
  m.set(
    'outs',
    s.tx.outs.map((charms, i) => {
      const o = new ValueMap();
      if (charms.size > 0) o.set('charms', new ValueMap([...charms.entries()].map(([k, d]) => [appRef(k), d])));
      const beam = s.tx.beamed_outs?.get(i);
      if (beam) o.set('beam_to', toHex(beam));
      const content = s.tx.coins?.[i]?.content;
      if (content !== undefined) o.set('content', content);
      return o;
    }),
  );
  return m;
}
