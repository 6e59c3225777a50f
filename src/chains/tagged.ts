/**
 * Chain-tagged transactions (`{bitcoin: hex}` / `{cardano: hex}`, the library's input form) and
 * the dispatch of spell extraction to the chain's extractor. Browser-safe: no Node built-ins.
 */
import { CharmsError } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import type { Chain } from '../model/request.js';
import type { NormalizedSpell } from '../model/spell.js';
import type { SpellAndProof } from '../groth16/spell.js';
import { extractAndVerifyBitcoin, extractBitcoinSpell } from '../bitcoin/extract.js';
import { extractAndVerifyCardano, extractCardanoSpell } from '../cardano/extract.js';

/** A whole transaction tagged with its chain, as hex or bytes. */
export type TaggedTx = { bitcoin: string | Uint8Array } | { cardano: string | Uint8Array };

/** `tx` tagged with `chain`. */
export const tagTx = (chain: Chain, tx: string | Uint8Array): TaggedTx => (chain === 'bitcoin' ? { bitcoin: tx } : { cardano: tx });

const bytesOf = (x: string | Uint8Array, what: string): Uint8Array => (typeof x === 'string' ? fromHex(x, what) : x);

/** The chain and bytes of a tagged transaction (INVALID_INPUT for anything else). */
export function untagTx(tx: TaggedTx): { chain: Chain; bytes: Uint8Array } {
  if ('bitcoin' in tx) return { chain: 'bitcoin', bytes: bytesOf(tx.bitcoin, 'bitcoin tx') };
  if ('cardano' in tx) return { chain: 'cardano', bytes: bytesOf(tx.cardano, 'cardano tx') };
  throw new CharmsError('INVALID_INPUT', 'expected {bitcoin: hex} or {cardano: hex}');
}

/** The chain's extractor: the spell and proof a transaction carries, proof not checked yet. */
export const extractSpellOn = (chain: Chain, bytes: Uint8Array, mock: boolean): SpellAndProof =>
  chain === 'bitcoin' ? extractBitcoinSpell(bytes) : extractCardanoSpell(bytes, mock);

/** The chain's extractor, proof checked: the spell if the transaction carries one with a valid proof. */
export const extractAndVerifyOn = (chain: Chain, bytes: Uint8Array, mock: boolean): NormalizedSpell =>
  chain === 'bitcoin' ? extractAndVerifyBitcoin(bytes, mock) : extractAndVerifyCardano(bytes, mock);
