/**
 * The spells of prerequisite transactions as the checker sees them (the reference's
 * `virtual_spell`, called with the spell being checked as `next_spell`):
 *
 * - a transaction with a valid spell: that spell (ins and coins filled from the transaction), with
 *   `coins` = ALL outputs of the transaction;
 * - a transaction without one (no spell, bad proof, mock spell outside mock mode, ...): an empty
 *   current-version spell with `ins` = all its inputs, `outs` = [] and `coins` = all outputs.
 *   On Cardano the outputs' native tokens of the next spell's token apps are read back as charms
 *   (charms moved by ordinary wallets), as the reference does.
 *
 * Plus the charms each UTXO holds (`charms_in_utxo`).
 */
import { sha256 } from '../util/sha256.js';
import { CharmsError } from '../errors.js';
import { ValueMap } from '../codec/value.js';
import { fromHex, toHex } from '../util/bytes.js';
import { parseTx, txid as bitcoinTxid } from '../bitcoin/tx.js';
import { spellProofCheck } from '../groth16/spell.js';
import type { SpellProofCheck } from '../groth16/verify.js';
import { isNoSpell } from '../verify/index.js';
import { cardanoTxid, parseCardanoTx } from '../cardano/tx.js';
import { extractAndVerifyOn, extractSpellOn } from '../chains/tagged.js';
import { chainTxid } from '../chains/detect.js';
import { parseInputs, parseOutputs, type CardanoOutput } from '../cardano/extract.js';
import { assetNameForApp, expectedTokens, policyIdForApp } from '../cardano/assets.js';
import { assetsToValue, subtractAssets } from '../cardano/content.js';
import { CURRENT_VERSION, type Charms, type NativeOutput, type NormalizedCharms, type NormalizedSpell } from '../model/spell.js';
import { txidToDisplay, utxoIdToString, type App, type Data, type UtxoId } from '../model/primitives.js';
import type { ChainTx } from '../model/request.js';

/**
 * Verified spells of recent prerequisite transactions, by SHA-256 of the transaction bytes and
 * the mock flag: verifying is a pure function of those, and a prover sees the same prev txs again
 * and again (a chain of spends, retries), each worth a pairing check. Holds the spell, or null
 * for "no valid spell"; real errors are never kept. Bounded (least recently used goes first).
 */
const VERIFIED_CACHE_SIZE = 2048;
const verifiedCache = new Map<string, NormalizedSpell | null>();

const cacheKey = (chain: 'bitcoin' | 'cardano', bytes: Uint8Array, mock: boolean): string => `${chain}:${mock ? 1 : 0}:${toHex(sha256(bytes))}`;

function remember(key: string, spell: NormalizedSpell | null): void {
  if (verifiedCache.size >= VERIFIED_CACHE_SIZE) verifiedCache.delete(verifiedCache.keys().next().value!);
  verifiedCache.set(key, spell);
}

function verifiedSpellOf(chain: 'bitcoin' | 'cardano', bytes: Uint8Array, mock: boolean): NormalizedSpell | null {
  const key = cacheKey(chain, bytes, mock);
  const hit = verifiedCache.get(key);
  if (hit !== undefined) {
    verifiedCache.delete(key); // refresh its place
    verifiedCache.set(key, hit);
    return hit;
  }
  let spell: NormalizedSpell | null;
  try {
    spell = extractAndVerifyOn(chain, bytes, mock);
  } catch (e) {
    if (!isNoSpell(e)) throw e;
    spell = null;
  }
  remember(key, spell);
  return spell;
}

/**
 * Verifies the spells of `prevTxs` not verified yet with `verify` (e.g. on proof worker threads)
 * and keeps the verdicts, so that the checker's synchronous pass finds them done. Extraction runs
 * here; a transaction that cannot be read is left to the checker, which reports it.
 */
export async function preverifyPrevSpells(
  prevTxs: readonly ChainTx[],
  mock: boolean,
  verify: (checks: SpellProofCheck[]) => Promise<(CharmsError | undefined)[]>,
): Promise<void> {
  const todo: { key: string; spell: NormalizedSpell }[] = [];
  const checks: SpellProofCheck[] = [];
  for (const t of prevTxs) {
    let bytes: Uint8Array;
    try {
      bytes = fromHex(t.hex, 'prev_txs');
    } catch {
      continue;
    }
    const key = cacheKey(t.chain, bytes, mock);
    if (verifiedCache.has(key) || todo.some((x) => x.key === key)) continue;
    try {
      const { spell, proof } = extractSpellOn(t.chain, bytes, mock);
      checks.push(spellProofCheck(spell, proof, mock));
      todo.push({ key, spell });
    } catch (e) {
      if (isNoSpell(e)) remember(key, null);
    }
  }
  const errors = await verify(checks);
  todo.forEach(({ key, spell }, i) => {
    const e = errors[i];
    if (e === undefined) remember(key, spell);
    else if (isNoSpell(e)) remember(key, null);
  });
}

/** Forgets the verified prev-tx spells (tests that swap the proof backend use it). */
export const clearVerifiedPrevSpells = (): void => verifiedCache.clear();

export interface PrevSpell {
  /** Internal byte order. */
  txid: Uint8Array;
  spell: NormalizedSpell;
  /** Number of outputs of the transaction. */
  numOuts: number;
  tx: ChainTx;
  /** Whether the transaction carried a valid spell. */
  verified: boolean;
  /**
   * Cardano outputs whose `content` (datum / script reference as Data) we cannot render yet;
   * spending one as a coin input is refused with UNSUPPORTED.
   */
  unrenderedCoins?: Set<number>;
}

const emptySpell = (ins: UtxoId[], coins: NativeOutput[]): NormalizedSpell => ({
  version: CURRENT_VERSION,
  tx: { ins, outs: [], coins },
  app_public_inputs: [],
  versioned_apps: [],
  mock: false,
});

function bitcoinVirtualSpell(t: ChainTx, mock: boolean): PrevSpell {
  const bytes = fromHex(t.hex, 'prev_txs');
  const tx = parseTx(bytes);
  const txid = bitcoinTxid(tx);
  const coins = tx.outputs.map((o) => ({ amount: o.value, dest: o.script }));
  const base = { txid, numOuts: tx.outputs.length, tx: t };
  const spell = verifiedSpellOf('bitcoin', bytes, mock);
  if (spell) return { ...base, spell: { ...spell, tx: { ...spell.tx, coins } }, verified: true };
  return {
    ...base,
    spell: emptySpell(
      tx.inputs.map((i) => ({ txid: i.txid, vout: i.vout })),
      coins,
    ),
    verified: false,
  };
}

// ------------------------------------------------------------------------------ Cardano

/**
 * `all_coin_outs` on Cardano: every output with `content` = its native tokens minus those of its
 * charms (unless beamed out), plus datum and script reference. Outputs carrying a datum or a
 * script reference are kept with the filled spell's content when it has one, otherwise marked
 * unrendered.
 */
function cardanoCoins(spell: NormalizedSpell, outs: CardanoOutput[], txLabel: string) {
  const unrendered = new Set<number>();
  const coins = outs.map((o, i): NativeOutput => {
    const filled = spell.tx.coins?.[i];
    if (filled?.content !== undefined) return filled;
    const n = spell.tx.outs[i];
    const beamed = spell.tx.beamed_outs?.has(i) ?? false;
    const charms = n && !beamed ? charmsOf(spell, n) : [];
    const rest = subtractAssets(o.assets, expectedTokens(charms), `${txLabel} output #${i}`);
    const coin: NativeOutput = { amount: o.lovelace, dest: o.address, content: new ValueMap([['multiasset', assetsToValue(rest)]]) };
    if (o.datum !== undefined || o.scriptRef !== undefined) unrendered.add(i);
    return coin;
  });
  return { coins, unrendered };
}

function cardanoVirtualSpell(t: ChainTx, next: NormalizedSpell, mock: boolean): PrevSpell {
  const bytes = fromHex(t.hex, 'prev_txs');
  const tx = parseCardanoTx(bytes);
  const txid = cardanoTxid(tx);
  const outs = parseOutputs(tx);
  const label = `prev tx ${txidToDisplay(txid)}`;
  const base = { txid, numOuts: outs.length, tx: t };
  let spell: NormalizedSpell;
  let verified = true;
  const found = verifiedSpellOf('cardano', bytes, mock);
  if (found) spell = found;
  else {
    verified = false;
    // Charms of the next spell's token apps held as plain native tokens (NFTs: not yet, as in
    // the reference).
    const apps = next.app_public_inputs.map(([a]) => a);
    const outsCharms: NormalizedCharms[] = outs.map((o) => {
      const n: NormalizedCharms = new Map();
      apps.forEach((app, i) => {
        if (app.tag !== 't') return;
        const amount = o.assets.get(toHex(policyIdForApp(app)))?.get(toHex(assetNameForApp(app)));
        if (amount !== undefined) n.set(i, amount);
      });
      return n;
    });
    spell = {
      ...emptySpell(parseInputs(tx), []),
      tx: { ins: parseInputs(tx), outs: outsCharms },
      app_public_inputs: apps.map((a) => [a, null] as [App, Data]),
    };
  }
  const { coins, unrendered } = cardanoCoins(spell, outs, label);
  const p: PrevSpell = { ...base, spell: { ...spell, tx: { ...spell.tx, coins } }, verified };
  if (unrendered.size > 0) p.unrenderedCoins = unrendered;
  return p;
}

// ------------------------------------------------------------------------------ API

/**
 * The virtual spell of one prerequisite transaction. `mock` allows mock spells (the reference
 * passes the next spell's `mock` flag).
 */
function virtualSpell(t: ChainTx, next: NormalizedSpell, mock: boolean): PrevSpell {
  return t.chain === 'cardano' ? cardanoVirtualSpell(t, next, mock) : bitcoinVirtualSpell(t, mock);
}

/** Prev spells by txid (hex of internal order); a repeated transaction counts once. */
export function prevSpells(prevTxs: ChainTx[], next: NormalizedSpell, mock: boolean): Map<string, PrevSpell> {
  const out = new Map<string, PrevSpell>();
  for (const t of prevTxs) {
    const p = virtualSpell(t, next, mock);
    out.set(toHex(p.txid), p);
  }
  return out;
}

/** `charms(spell, n_charms)`: app indexes resolved to apps (in App order, as indexes are). */
export function charmsOf(spell: NormalizedSpell, n: NormalizedCharms): Charms {
  return [...n.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([i, d]) => {
      const app = spell.app_public_inputs[i]?.[0];
      if (!app) throw new CharmsError('INVALID_SPELL', `charm refers to app index ${i}, but the spell has ${spell.app_public_inputs.length} app(s)`);
      return [app, d] as [App, Data];
    });
}

/** `charms_in_utxo`: the charms output `vout` of the spell holds; undefined when none. */
export function charmsInUtxo(spell: NormalizedSpell, vout: number): Charms | undefined {
  const n = spell.tx.outs[vout];
  if (!n || n.size === 0) return undefined;
  return charmsOf(spell, n);
}

/**
 * The charms held by a UTXO, as the app sees them: its own charms, else (for a beamed input) the
 * charms of its beaming source, else none.
 */
export function charmsHeldBy(prev: Map<string, PrevSpell>, u: UtxoId, beamSource?: UtxoId): Charms {
  const p = prev.get(toHex(u.txid));
  if (!p) throw new CharmsError('INVALID_SPELL', `utxo not found in prev_txs: ${utxoIdToString(u)}`);
  const own = charmsInUtxo(p.spell, u.vout);
  if (own) return own;
  if (beamSource) {
    const s = prev.get(toHex(beamSource.txid));
    if (!s) throw new CharmsError('INVALID_SPELL', `beaming source not found in prev_txs: ${utxoIdToString(beamSource)}`);
    return charmsInUtxo(s.spell, beamSource.vout) ?? [];
  }
  return [];
}

/**
 * The prerequisite transactions (display txids) whose spell is a mock: outside mock mode they count
 * as carrying no spell (as in the reference), which an error should then say.
 */
export function mockSpellTxids(prevTxs: readonly ChainTx[]): string[] {
  const out: string[] = [];
  for (const t of prevTxs) {
    try {
      const bytes = fromHex(t.hex, 'prev_txs');
      const { spell } = extractSpellOn(t.chain, bytes, true);
      if (spell.mock) out.push(txidToDisplay(chainTxid(t)));
    } catch {
      /* no spell, or unreadable: reported elsewhere */
    }
  }
  return out;
}
