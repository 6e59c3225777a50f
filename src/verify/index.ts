/**
 * charms-ts/verify: the browser-safe read side. Given a chain-tagged transaction, find the
 * spell it carries and verify its proof. Imports no Node built-ins.
 *
 *   import { extractAndVerifySpell } from 'charms-ts/verify';
 *   const spell = extractAndVerifySpell({ bitcoin: txHex }, false);
 */
import { CharmsError, type ErrorCode } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import { spellToValue, type NormalizedSpell } from '../model/spell.js';
import { toJsonPretty } from '../codec/json.js';
import { toYaml } from '../codec/yaml.js';
import { extractAndVerifyBitcoin } from '../bitcoin/extract.js';
import { extractAndVerifyCardano } from '../cardano/extract.js';

export type TxInput = { bitcoin: string | Uint8Array } | { cardano: string | Uint8Array };

const bytesOf = (x: string | Uint8Array, what: string): Uint8Array => (typeof x === 'string' ? fromHex(x, what) : x);

/**
 * Returns the spell (with `tx.ins`/`tx.coins` recovered from the transaction) if the transaction
 * carries a spell with a valid proof; throws a CharmsError otherwise. Mock proofs are accepted
 * only when `mock` is true.
 */
export function extractAndVerifySpell(tx: TxInput, mock = false): NormalizedSpell {
  try {
    if ('bitcoin' in tx) return extractAndVerifyBitcoin(bytesOf(tx.bitcoin, 'bitcoin tx'), mock);
    if ('cardano' in tx) return extractAndVerifyCardano(bytesOf(tx.cardano, 'cardano tx'), mock);
  } catch (e) {
    // The decoders throw CharmsErrors only (fuzzed in src/fuzz); this keeps the contract if one
    // does not, as an INTERNAL error (a bug to report), never a raw exception.
    if (e instanceof CharmsError) throw e;
    throw new CharmsError('INTERNAL', `extracting the spell failed unexpectedly: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  throw new CharmsError('INVALID_INPUT', 'expected {bitcoin: hex} or {cardano: hex}');
}

/**
 * Codes that say "the transaction cannot be read, or our side failed": real errors. Any other
 * CharmsError from extraction means "no (valid) spell", as the reference treats every failure
 * after the transaction parsed. Anything not a CharmsError is a bug, hence real too.
 */
const REAL_ERRORS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'INVALID_TX',
  'INTERNAL',
  'IO',
  'CONFIG',
  'PAYLOAD_TOO_LARGE',
  'UPSTREAM_FAILED',
  'UPSTREAM_UNAVAILABLE',
  'SCROLLS_REFUSED',
]);

/** The one "no spell, or a real error?" rule: true when `e` only means the tx has no valid spell. */
export const isNoSpell = (e: unknown): boolean => e instanceof CharmsError && !REAL_ERRORS.has(e.code);

/**
 * `extractAndVerifySpell`, with "no valid spell" as `undefined` (by `isNoSpell`); real errors
 * (unreadable transaction, bugs) are thrown. Used by `tx show-spell`, the spell-query service,
 * prev-spell reading and `wallet list`.
 */
export function spellOrNone(tx: TxInput, mock = false): NormalizedSpell | undefined {
  try {
    return extractAndVerifySpell(tx, mock);
  } catch (e) {
    if (isNoSpell(e)) return undefined;
    throw e;
  }
}

/** The spell as `tx show-spell --json` prints it (serde_json pretty, no trailing newline). */
export const spellToJson = (s: NormalizedSpell): string => toJsonPretty(spellToValue(s, true));
/** The spell as `tx show-spell` prints it (serde_yaml). */
export const spellToYaml = (s: NormalizedSpell): string => toYaml(spellToValue(s, true));

export type { NormalizedSpell } from '../model/spell.js';
export { CharmsError } from '../errors.js';
/** Optional: load the WASM pairing backend (about 4× faster); verification stays synchronous. */
export { initProofBackend } from '../proof/verify.js';
