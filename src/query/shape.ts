/**
 * The spell-query response: the former service's denormalized spell, apps referred to by `$NNNN`:
 * `{version, apps: {"$0000": app}, public_args?, ins: [{utxo_id}], refs?, outs: [{charms?, beam_to?, content?}]}`.
 *
 * Rules (wire-formats §4.2): a reference is `$` + the app's index in the sorted app list, padded
 * to 4 digits (`$10000` past 9999); maps keyed by references are ordered as strings, like the
 * former service's string-keyed maps; `public_args` lists only non-null public inputs and is left
 * out when there is none; `refs` is left out when empty; an output without charms is `{}`;
 * `beam_to` (hex) and `content` appear on the outputs that have them; addresses, amounts and
 * private inputs are never filled. A mock spell (served only in mock mode) has `mock: true` after
 * `version`; real spells have no `mock` field.
 */
import { ValueMap, type Value } from '../codec/value.js';
import { toJsonCompact } from '../codec/json.js';
import { toHex } from '../util/bytes.js';
import { appToString, utxoIdToString } from '../model/primitives.js';
import type { NormalizedSpell } from '../model/spell.js';

/** `$` + the app index padded to 4 digits (`$10000` past 9999). */
export const appRef = (i: number): string => `$${String(i).padStart(4, '0')}`;

const byString = (a: [string, Value], b: [string, Value]): number => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
const refMap = (entries: [string, Value][]): ValueMap => new ValueMap(entries.sort(byString));

/** The response as a value (print it with the JSON codec). */
export function spellQueryValue(s: NormalizedSpell): ValueMap {
  const m = new ValueMap();
  m.set('version', BigInt(s.version));
  // only a mock-mode service serves mock spells; a wallet must be able to tell them from real charms
  if (s.mock) m.set('mock', true);
  m.set('apps', refMap(s.app_public_inputs.map(([a], i) => [appRef(i), appToString(a)])));
  const publicArgs = s.app_public_inputs.flatMap(([, d], i): [string, Value][] => (d === null || d === undefined ? [] : [[appRef(i), d]]));
  if (publicArgs.length > 0) m.set('public_args', refMap(publicArgs));
  m.set(
    'ins',
    (s.tx.ins ?? []).map((u) => ValueMap.of({ utxo_id: utxoIdToString(u) })),
  );
  if (s.tx.refs && s.tx.refs.length > 0)
    m.set(
      'refs',
      s.tx.refs.map((u) => ValueMap.of({ utxo_id: utxoIdToString(u) })),
    );
  m.set(
    'outs',
    s.tx.outs.map((charms, i) => {
      const o = new ValueMap();
      if (charms.size > 0) o.set('charms', refMap([...charms.entries()].map(([k, d]): [string, Value] => [appRef(k), d])));
      const beam = s.tx.beamed_outs?.get(i);
      if (beam) o.set('beam_to', toHex(beam));
      const content = s.tx.coins?.[i]?.content;
      if (content !== undefined && content !== null) o.set('content', content);
      return o;
    }),
  );
  return m;
}

/** The response as compact JSON text (what the service sends). */
export const spellQueryJson = (s: NormalizedSpell): string => toJsonCompact(spellQueryValue(s));
