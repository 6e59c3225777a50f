/**
 * User-authored inputs of `spell check` / `spell prove`: spell files, private inputs, beaming
 * sources, app signatures and prerequisite transactions, in the forms the reference CLI accepts.
 */
import { parseYaml } from '../codec/yaml.js';
import { parseJson } from '../codec/json.js';
import { ValueMap, type Value } from '../codec/value.js';
import { CharmsError } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import { appFromValue, asMap, type App, type B32, type Data } from './primitives.js';
import {
  type AppSignature,
  type BeamSource,
  type NormalizedSpell,
  appSignatureFromValue,
  b32MapFromValue,
  beamSourceFromValue,
  spellFromValue,
  u32MapFromValue,
} from './spell.js';
import { chainTxFromValue, type Chain, type ChainTx } from './request.js';

/** A spell file (YAML or JSON; YAML is a superset) in the normalized format. */
export function parseSpellText(text: string, what = 'spell'): NormalizedSpell {
  return spellFromValue(parseYaml(text), true, what);
}

/** `--private-inputs`: map `tag/identity/vk` → data (no sortedness check, as the reference). */
export function parsePrivateInputs(text: string): [App, Data][] {
  const m = asMap(parseYaml(text) ?? new ValueMap(), 'private inputs');
  return m.entries.map(([k, v]) => [appFromValue(k, true, 'private inputs key'), v] as [App, Data]);
}

/** `--beamed-from`: map input index → `["txid:vout"]` or `["txid:vout", nonce]`. */
export function parseBeamedFrom(text: string): Map<number, BeamSource> {
  return u32MapFromValue(parseYaml(text), true, 'beamed-from', (v, p) => beamSourceFromValue(v, true, p));
}

/** `--app-signatures`: map vk → `{public_key, signature}`. */
export function parseAppSignatures(text: string): [B32, AppSignature][] {
  return b32MapFromValue(parseYaml(text), true, 'app signatures', (v, p) => appSignatureFromValue(v, true, p));
}

/**
 * One `--prev-txs` value: plain hex (chain detected by `detectChain`), JSON `{"bitcoin": …}`,
 * or YAML (`!bitcoin <hex>`, `!cardano {tx, signature}`), in that order.
 */
export function parsePrevTx(s: string, detectChain: (bytes: Uint8Array) => Chain, index = 0): ChainTx {
  const t = s.trim();
  const path = `prev-txs[${index}]`;
  if (/^[0-9a-fA-F]+$/.test(t)) {
    const chain = detectChain(fromHex(t, path));
    return { chain, hex: t.toLowerCase() } as ChainTx;
  }
  let v: Value;
  try {
    v = t.startsWith('{') ? parseJson(t) : parseYaml(t);
  } catch (e) {
    throw new CharmsError('INVALID_INPUT', `${path}: not hex, JSON or YAML`, { cause: e });
  }
  if (!(v instanceof ValueMap))
    throw new CharmsError(
      'INVALID_INPUT',
      `${path}: ${JSON.stringify(t.length > 24 ? `${t.slice(0, 24)}…` : t)} is not a transaction: give the raw transaction as hex, or as {bitcoin: <hex>} / {cardano: <hex>} (JSON or YAML)`,
    );
  return chainTxFromValue(v, path);
}
