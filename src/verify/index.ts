/**
 * charms-ts/verify: the browser-safe read side. Given a chain-tagged transaction, find the
 * spell it carries and verify its proof. Imports no Node built-ins.
 *
 *   import { extractAndVerifySpell } from 'charms-ts/verify';
 *   const spell = extractAndVerifySpell({ bitcoin: txHex }, false);
 *   const verdicts = verifySpells([{ bitcoin: hex1 }, { cardano: hex2 }], false); // batched
 */
import { CharmsError, type ErrorCode } from '../errors.js';
import { spellToValue, type NormalizedSpell } from '../model/spell.js';
import { toJsonPretty } from '../codec/json.js';
import { toYaml } from '../codec/yaml.js';
import { spellProofCheck, type SpellAndProof } from '../groth16/spell.js';
import { verifySpellProofs, type SpellProofCheck } from '../groth16/verify.js';
import { extractAndVerifyOn, extractSpellOn, untagTx, type TaggedTx } from '../chains/tagged.js';

export type { TaggedTx } from '../chains/tagged.js';
/** @deprecated the old name of `TaggedTx`. */
export type { TaggedTx as TxInput } from '../chains/tagged.js';

/**
 * Returns the spell (with `tx.ins`/`tx.coins` recovered from the transaction) if the transaction
 * carries a spell with a valid proof; throws a CharmsError otherwise. Mock proofs are accepted
 * only when `mock` is true.
 */
export function extractAndVerifySpell(tx: TaggedTx, mock = false): NormalizedSpell {
  return onlyCharmsErrors(() => {
    const { chain, bytes } = untagTx(tx);
    return extractAndVerifyOn(chain, bytes, mock);
  });
}

/**
 * The decoders throw CharmsErrors only (fuzzed in src/testing/fuzz); this keeps the contract if
 * one does not, as an INTERNAL error (a bug to report), never a raw exception.
 */
function onlyCharmsErrors<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof CharmsError) throw e;
    throw new CharmsError('INTERNAL', `extracting the spell failed unexpectedly: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}

/** One transaction's verdict from verifySpells. */
export type SpellVerdict = { ok: true; spell: NormalizedSpell } | { ok: false; error: CharmsError };

/**
 * extractAndVerifySpell for many transactions, with the same verdict for each (in input order),
 * but the real proofs of one verifying key checked together in one random linear combination:
 * for indexers and wallets, several times faster per transaction than one call each. A
 * transaction whose spell or proof is bad fails alone; the others still verify.
 */
export function verifySpells(txs: readonly TaggedTx[], mock = false): SpellVerdict[] {
  const verdicts: SpellVerdict[] = [];
  const checks: SpellProofCheck[] = [];
  const pending: { at: number; spell: NormalizedSpell }[] = [];
  for (const tx of txs) {
    try {
      const { spell, proof }: SpellAndProof = onlyCharmsErrors(() => {
        const { chain, bytes } = untagTx(tx);
        return extractSpellOn(chain, bytes, mock);
      });
      checks.push(onlyCharmsErrors(() => spellProofCheck(spell, proof, mock)));
      pending.push({ at: verdicts.length, spell });
      verdicts.push({ ok: true, spell });
    } catch (e) {
      verdicts.push({ ok: false, error: e as CharmsError });
    }
  }
  verifySpellProofs(checks).forEach((error, i) => {
    if (error) verdicts[pending[i]!.at] = { ok: false, error };
  });
  return verdicts;
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
  'REQUEST_TIMEOUT',
  'SERVER_BUSY',
  'RELAY_LOOP',
]);

/** The one "no spell, or a real error?" rule: true when `e` only means the tx has no valid spell. */
export const isNoSpell = (e: unknown): boolean => e instanceof CharmsError && !REAL_ERRORS.has(e.code);

/**
 * `extractAndVerifySpell`, with "no valid spell" as `undefined` (by `isNoSpell`); real errors
 * (unreadable transaction, bugs) are thrown. Used by `tx show-spell`, the spell-query service,
 * prev-spell reading and `wallet list`.
 */
export function spellOrNone(tx: TaggedTx, mock = false): NormalizedSpell | undefined {
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
export { initPairingBackend } from '../groth16/verify.js';
/** @deprecated the old name of `initPairingBackend`. */
export { initPairingBackend as initProofBackend } from '../groth16/verify.js';
