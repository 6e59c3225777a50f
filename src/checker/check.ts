/**
 * The spell checker: a port of the reference's correctness rules (`is_correct` and what it calls in
 * charms-client, `run_all` in charms-app-runner) and of the request checks the CLI (`spell check`)
 * and the prover (`validate_prove_request`) make before it. Every error names the rule that failed
 * and the app or input concerned: INVALID_SPELL for a broken rule, APP_FAILED when a contract
 * rejects, UNSUPPORTED for what we cannot check yet.
 */
import { CharmsError } from '../errors.js';
import { sha256 } from '../util/sha256.js';
import { compareBytes, equalBytes, fromHex, toHex } from '../util/bytes.js';
import { appToString, txidToDisplay, utxoIdToBytes, utxoIdToString, type App, type B32, type Data, type UtxoId } from '../model/primitives.js';
import { CURRENT_VERSION, type AppSignature, type BeamSource, type NativeOutput, type NormalizedSpell, type VersionedApp } from '../model/spell.js';
import { ValueMap } from '../codec/value.js';
import type { Chain, ChainTx, SpellInputs } from '../model/request.js';
import { vkOfBinary, vkOfPublicKey, verifyBinarySignature } from '../keys/app-key.js';
import { appStdin, appTransaction, type AppTransaction } from './app-input.js';
import { charmsInUtxo, mockSpellTxids, prevSpells, type PrevSpell } from './prev-spells.js';
import { chainTxid } from '../chains/detect.js';
import { isSimpleTransfer, isU64 } from './transfer.js';
import { verifyBitcoinFinality } from '../bitcoin/finality.js';
import { verifyCardanoFinality } from '../cardano/finality.js';
import { checkScrollOutputs, type SignedScrollOutputs } from '../bitcoin/scrolls.js';

import type { RunResult } from '../runner/index.js';
export type { RunResult };
/** The app runner (src/runner `runApp`), injected so tests can fake it. */
export type RunApp = (args: { wasm: Uint8Array; stdin: Uint8Array; expectedVersion?: number; fuelLimit?: bigint; timeoutMs?: number }) => Promise<RunResult>;

/** A spell's inputs (the one bundle, model/request.ts) plus how to check them. */
export interface CheckArgs extends SpellInputs {
  /** Accept mock proofs in prerequisite transactions (the reference uses the spell's `mock`). */
  mock: boolean;
  runApp: RunApp;
  /** Receives each app's stderr (how a contract explains a rejection). */
  onAppStderr?: (app: App, text: string) => void;
  /**
   * The Scrolls canister's signed scriptPubKey map for a Bitcoin spell's Scrolls outputs (the
   * prover fills it); without it such outputs are reported unbound.
   */
  scrollOutputs?: SignedScrollOutputs;
  /** Key the map's signature is checked with; default: the protocol's Scrolls Bitcoin key. */
  scrollsKey?: Uint8Array;
}

export interface CheckResult {
  /** Cycles per app, in app order (0 for apps not run). */
  cycles: bigint[];
  /** Simple-transfer / contract-satisfied notices and warnings, for stderr. */
  notices: string[];
  /** False when a Bitcoin spell lists Scrolls outputs whose scriptPubKeys are not bound yet. */
  scrollsBound: boolean;
  /** The spell as checked: Cardano coins given their default `content`. */
  spell: NormalizedSpell;
}

const rule = (msg: string) => new CharmsError('INVALID_SPELL', msg);
/**
 * The reference's `ensure!(cond)` without a message fails with anyhow's "Condition failed: `cond`";
 * its checks of that kind give that sentence first and ours after it.
 */
const conditionFailed = (cond: string) => (msg: string) => rule(`Condition failed: \`${cond}\`: ${msg}`);
const wf = conditionFailed('well_formed(spell, &prev_spells, tx_ins_beamed_source_utxos)');
const isEmpty = (d: Data | undefined) => d === undefined || d === null;
const appsOf = (spell: NormalizedSpell): App[] => spell.app_public_inputs.map(([a]) => a);
const versionedOf = (spell: NormalizedSpell, vk: B32): VersionedApp | undefined => spell.versioned_apps.find(([k]) => equalBytes(k, vk))?.[1];
const beamedOutHash = (spell: NormalizedSpell, i: number): B32 | undefined => spell.tx.beamed_outs?.get(i);
const showTxids = (s: Iterable<string>) =>
  [...s]
    .sort()
    .map((h) => txidToDisplay(fromHex(h)))
    .join(', ');
const showSet = (s: Iterable<string>) => `{${[...s].sort().join(', ')}}`;

/** `utxo_id_hash_with_nonce`: SHA-256(utxo id bytes ‖ nonce u64 LE if any). */
export function utxoHashWithNonce(u: UtxoId, nonce?: bigint): Uint8Array {
  const b = utxoIdToBytes(u);
  if (nonce === undefined) return sha256(b);
  const out = new Uint8Array(44);
  out.set(b);
  new DataView(out.buffer).setBigUint64(36, nonce, true);
  return sha256(out);
}

// ------------------------------------------------------------------------------ request shape

/**
 * `adjust_coin_contents`: coins present, one per output; Bitcoin coins carry no `content`; Cardano
 * coins without one get the default `{multiasset: {}}` (the reference also canonicalizes given
 * contents through its Cardano types; we keep them as given).
 */
function adjustCoinContents(spell: NormalizedSpell, chain: Chain): NormalizedSpell {
  const coins = spell.tx.coins;
  if (!coins) throw rule('coins must be present');
  if (coins.length !== spell.tx.outs.length) throw rule(`coins length (${coins.length}) must match outs length (${spell.tx.outs.length})`);
  if (chain === 'bitcoin') {
    coins.forEach((c, i) => {
      if (c.content !== undefined) throw rule(`coins[${i}].content must be None for Bitcoin`);
    });
    return spell;
  }
  if (coins.every((c) => c.content !== undefined)) return spell;
  const filled: NativeOutput[] = coins.map((c) => (c.content !== undefined ? c : { ...c, content: new ValueMap([['multiasset', new ValueMap()]]) }));
  return { ...spell, tx: { ...spell.tx, coins: filled } };
}

/** `ensure_all_prev_txs_are_present`: the producing transactions, all of them and nothing else. */
function ensureAllPrevTxsArePresent(spell: NormalizedSpell, beamedFrom: Map<number, BeamSource>, prevTxids: Set<string>): void {
  const ins = spell.tx.ins;
  if (!ins) throw rule('spell.tx.ins must be present');
  const has = (u: UtxoId) => prevTxids.has(toHex(u.txid));
  const missingIn = ins.find((u) => !has(u));
  if (missingIn) throw rule(`prev_txs MUST contain transactions creating input UTXOs (missing the one of ${utxoIdToString(missingIn)})`);
  const missingRef = (spell.tx.refs ?? []).find((u) => !has(u));
  if (missingRef) throw rule(`prev_txs MUST contain transactions creating ref UTXOs (missing the one of ${utxoIdToString(missingRef)})`);
  for (const [i, b] of beamedFrom) {
    const u = ins[i];
    if (!u || !has(u) || !has(b.utxo)) throw rule(`prev_txs MUST contain transactions creating beaming source and destination UTXOs (input #${i})`);
  }
  const required = new Set([...ins, ...(spell.tx.refs ?? []), ...[...beamedFrom.values()].map((b) => b.utxo)].map((u) => toHex(u.txid)));
  if (required.size !== prevTxids.size || [...required].some((t) => !prevTxids.has(t)))
    throw rule(
      `prev_txs must contain exactly the transactions producing spell inputs and beaming sources. Required: {${showTxids(required)}} Provided: {${showTxids(prevTxids)}}`,
    );
}

/** `ensure_unique_spell_inputs`. */
function ensureUniqueSpellInputs(spell: NormalizedSpell): void {
  const ins = spell.tx.ins;
  if (!ins) throw rule('spell.tx.ins must be present');
  const seen = new Set<string>();
  for (const u of ins) {
    const k = utxoIdToString(u);
    if (seen.has(k)) throw rule(`spell.tx.ins contains duplicate UTXO: ${k}`);
    seen.add(k);
  }
}

/** `ensure_no_orphan_versioned_apps`. */
function ensureNoOrphanVersionedApps(spell: NormalizedSpell): void {
  const vks = new Set(appsOf(spell).map((a) => toHex(a.vk)));
  for (const [vk] of spell.versioned_apps) if (!vks.has(toHex(vk))) throw rule(`versioned_apps contains unused vk: ${toHex(vk)}`);
}

/** Apps whose contract must run: non-empty public or private input, or not a simple transfer. */
function appsToRun(spell: NormalizedSpell, privates: Map<string, Data>, tx: AppTransaction): boolean[] {
  return spell.app_public_inputs.map(([app, x]) => !isEmpty(x) || !isEmpty(privates.get(appToString(app))) || !isSimpleTransfer(app, tx));
}

const binaryKey = (spell: NormalizedSpell, app: App) => toHex(versionedOf(spell, app.vk)?.wasm_hash ?? app.vk);

/**
 * `ensure_exact_app_binaries`: the binaries are exactly those of the apps whose contract must run.
 * The first sentence is the reference's (clients such as the Charms wallet match on it to stop
 * retrying); when no binaries were given at all, ours follows, naming the apps concerned.
 */
function ensureExactAppBinaries(spell: NormalizedSpell, needsRun: boolean[], binaries: Set<string>): void {
  const running = appsOf(spell).filter((_, i) => needsRun[i]);
  const required = new Set(running.map((a) => binaryKey(spell, a)));
  if (required.size === binaries.size && [...required].every((k) => binaries.has(k))) return;
  const head = `binaries must contain exactly the required app binaries. Required binary hashes: ${showSet(required)} Provided binary hashes: ${showSet(binaries)}`;
  if (binaries.size > 0 || running.length === 0) throw rule(head);
  throw rule(
    `${head}: no app binaries were provided, but the spell is not a simple transfer for: [${running.map(appToString).join(', ')}] (or gives them public/private inputs); provide the app binaries so the contracts can run, or restructure the spell to preserve balances/state`,
  );
}

/** `ensure_versioned_apps_have_signatures`: one signature per versioned app whose contract must run. */
function ensureVersionedAppsHaveSignatures(spell: NormalizedSpell, needsRun: boolean[], signatureVks: Set<string>): void {
  const running = appsOf(spell).filter((_, i) => needsRun[i]);
  const requiredSigs = new Set(running.filter((a) => versionedOf(spell, a.vk)).map((a) => toHex(a.vk)));
  if (requiredSigs.size !== signatureVks.size || [...requiredSigs].some((k) => !signatureVks.has(k)))
    throw rule(
      `app_signatures must contain exactly one entry per non-simple-transfer versioned app referenced in the spell. Required app vks: ${showSet(requiredSigs)} Provided app vks: ${showSet(signatureVks)}`,
    );
}

export interface PreparedCheck {
  spell: NormalizedSpell;
  prev: Map<string, PrevSpell>;
  tx: AppTransaction;
  /** Per app (in app order): its contract runs unless its version changes too. */
  needsRun: boolean[];
  privates: Map<string, Data>;
  /** App binaries by vk (hex). */
  binaries: Map<string, Uint8Array>;
}

/**
 * The checks the prover makes before `is_correct`, in the order of `validate_prove_request`
 * (reference src/spell/validate.rs): coins, prev_txs exactly the producing transactions, unique
 * inputs, the prerequisite spells, binaries exactly the required set, no orphan `versioned_apps`,
 * one signature per non-simple-transfer versioned app. Then the start of `is_correct`: finality of
 * beaming sources and `well_formed`. The order decides which refusal a bad request gets, and
 * clients match on the first sentence (the Charms wallet stops retrying on "binaries must contain
 * exactly"). Where the reference would panic building the app view (an app index or output out of
 * range), `appTransaction` throws its own error.
 */
export function validateProveRequestShape(a: SpellInputs & { mock: boolean }): PreparedCheck {
  const spell = adjustCoinContents(a.spell, a.chain);
  const beamedFrom = a.tx_ins_beamed_source_utxos;
  const prevTxids = new Set(a.prev_txs.map((t) => toHex(chainTxid(t))));
  ensureAllPrevTxsArePresent(spell, beamedFrom, prevTxids);
  ensureUniqueSpellInputs(spell);
  const prev = prevSpells(a.prev_txs, spell, a.mock || spell.mock);
  const tx = appTransaction(spell, prev, beamedFrom);
  const privates = new Map(a.app_private_inputs.map(([app, d]) => [appToString(app), d]));
  const needsRun = appsToRun(spell, privates, tx);
  const binaries = new Map(a.binaries.map(([vk, wasm]) => [toHex(vk), wasm]));
  ensureExactAppBinaries(spell, needsRun, new Set(binaries.keys()));
  ensureNoOrphanVersionedApps(spell);
  ensureVersionedAppsHaveSignatures(spell, needsRun, new Set(a.app_signatures.map(([vk]) => toHex(vk))));
  checkBeamingFinality(a.prev_txs, beamedFrom); // is_correct checks this first
  wellFormed(spell, prev, beamedFrom);
  return { spell, prev, tx, needsRun, privates, binaries };
}

// ------------------------------------------------------------------------------ is_correct

/** `beaming_txs_have_finality_proofs`: each beaming source transaction comes proven final. */
function checkBeamingFinality(prevTxs: ChainTx[], beamedFrom: Map<number, BeamSource>): void {
  if (beamedFrom.size === 0) return;
  const byTxid = new Map<string, ChainTx>();
  for (const t of prevTxs) byTxid.set(toHex(chainTxid(t)), t);
  for (const [i, b] of beamedFrom) {
    const t = byTxid.get(toHex(b.utxo.txid));
    const final =
      t?.chain === 'bitcoin'
        ? !!t.proof && verifyBitcoinFinality(t.hex, t.proof.proof, t.proof.headers)
        : t?.chain === 'cardano'
          ? t.signature !== undefined && verifyCardanoFinality(fromHex(t.hex), fromHex(t.signature))
          : false;
    if (!final)
      throw conditionFailed('beaming_txs_have_finality_proofs(prev_txs, tx_ins_beamed_source_utxos)')(
        `beaming finality: input #${i}'s beaming source transaction ${txidToDisplay(b.utxo.txid)} needs a valid finality proof in prev_txs ({bitcoin: {tx, proof, headers}} or {cardano: {tx, signature}})`,
      );
  }
}

/** `ensure_no_zero_amounts` (part of `well_formed`): token amounts are non-zero u64s. */
function ensureNoZeroAmounts(spell: NormalizedSpell): void {
  const apps = appsOf(spell);
  spell.tx.outs.forEach((out, o) => {
    for (const [i, d] of out) {
      const app = apps[i];
      if (!app) throw wf(`tx.outs[${o}] refers to app index ${i}, but app_public_inputs has ${apps.length} app(s)`);
      if (app.tag !== 't') continue;
      if (!isU64(d)) throw wf(`tx.outs[${o}]: the amount of token ${appToString(app)} must be an unsigned 64-bit integer`);
      if (d === 0n) throw wf(`zero output amount for app ${appToString(app)} (tx.outs[${o}])`);
    }
  });
}

/** `well_formed`, each condition with its own message after the reference's (`Condition failed: …`). */
export function wellFormed(spell: NormalizedSpell, prev: Map<string, PrevSpell>, beamedFrom: Map<number, BeamSource>): void {
  if (spell.version !== CURRENT_VERSION) throw wf(`spell version ${spell.version} is not the current protocol version ${CURRENT_VERSION}`);
  ensureNoZeroAmounts(spell);
  const ins = spell.tx.ins;
  if (!ins) throw wf('spell.tx.ins must be present');
  // `utxo_index <= num_tx_outs` is the reference's bound (sic); the coin lookup catches vout == numOuts.
  const created = (u: UtxoId): boolean => {
    const p = prev.get(toHex(u.txid));
    return !!p && u.vout <= p.numOuts && !beamedOutHash(p.spell, u.vout);
  };
  for (const [i, u] of ins.entries()) if (!created(u)) throw wf(`input #${i} ${utxoIdToString(u)} is not created by the given prev_txs (or was beamed out)`);
  for (const [i, u] of (spell.tx.refs ?? []).entries())
    if (!created(u)) throw wf(`ref #${i} ${utxoIdToString(u)} is not created by the given prev_txs (or was beamed out)`);
  for (const [i, b] of beamedFrom) {
    const dest = ins[i];
    if (!dest) throw wf(`beamed-from refers to input #${i}, but the spell has ${ins.length} input(s)`);
    const destPrev = prev.get(toHex(dest.txid));
    if (!destPrev) throw wf(`input #${i}: its transaction is missing from prev_txs`);
    if (charmsInUtxo(destPrev.spell, dest.vout) && !beamedOutHash(destPrev.spell, dest.vout))
      throw wf(`beamed input #${i} ${utxoIdToString(dest)} already carries charms`);
    const src = prev.get(toHex(b.utxo.txid));
    const hash = src && beamedOutHash(src.spell, b.utxo.vout);
    if (!hash || !equalBytes(hash, utxoHashWithNonce(dest, b.nonce)))
      throw wf(`input #${i}: beaming source ${utxoIdToString(b.utxo)} was not beamed to ${utxoIdToString(dest)}`);
  }
}

/**
 * `is_correct` compares the txids of the inputs and beaming sources with the prev_txs (refs are
 * not counted there, unlike in the request check): so a ref must come from a transaction that
 * also produces an input or a beaming source.
 */
function checkPrevTxidsMatchInputs(spell: NormalizedSpell, prev: Map<string, PrevSpell>, beamedFrom: Map<number, BeamSource>): void {
  const inputTxids = new Set([...spell.tx.ins!, ...[...beamedFrom.values()].map((b) => b.utxo)].map((u) => toHex(u.txid)));
  const extra = [...prev.keys()].filter((t) => !inputTxids.has(t));
  if (extra.length > 0)
    throw conditionFailed('all_prev_txids == prev_spells.keys().collect()')(
      `prev_txs must be exactly the transactions of the spell's inputs and beaming sources; {${showTxids(extra)}} only produce refs, which the protocol does not accept`,
    );
}

/** Source prev spell and UTXO of each input (the beaming source for a beamed input). */
function spentSources(spell: NormalizedSpell, prev: Map<string, PrevSpell>, beamedFrom: Map<number, BeamSource>) {
  return spell.tx.ins!.map((u, i) => {
    const b = beamedFrom.get(i);
    const src = b?.utxo ?? u;
    const p = prev.get(toHex(src.txid));
    if (!p) throw rule(`missing prev spell for ${b ? 'beam source' : 'input'} utxo ${utxoIdToString(src)} (input #${i})`);
    return { i, src, prevSpell: p.spell, charms: charmsInUtxo(p.spell, src.vout) ?? [] };
  });
}

/** `check_input_apps_are_referenced`: spending (or burning) a charm needs its app listed. */
function checkInputAppsAreReferenced(spell: NormalizedSpell, prev: Map<string, PrevSpell>, beamedFrom: Map<number, BeamSource>): void {
  const referenced = new Set(appsOf(spell).map(appToString));
  for (const s of spentSources(spell, prev, beamedFrom))
    for (const [app] of s.charms)
      if (!referenced.has(appToString(app)))
        throw rule(
          `input #${s.i} (${utxoIdToString(s.src)}) carries a charm for app ${appToString(app)}, but the spending spell does not list it in \`app_public_inputs\`. Spending (or burning) the charm requires the app to be referenced so its contract can authorize the operation.`,
        );
}

/** `check_prev_versioned_apps_consistency`: one wasm hash per (vk, version) across prev spells. */
function checkPrevVersionedAppsConsistency(prev: Map<string, PrevSpell>): void {
  const seen = new Map<string, [string, Uint8Array]>();
  const ordered = [...prev.values()].sort((a, b) => compareBytes(a.txid, b.txid));
  for (const p of ordered)
    for (const [vk, va] of p.spell.versioned_apps) {
      const k = `${toHex(vk)}/${va.version}`;
      const h = toHex(va.wasm_hash);
      const s = seen.get(k);
      if (s && s[0] !== h)
        throw rule(
          `inconsistent Wasm hash for versioned app (vk=${toHex(vk)}, version=${va.version}): ${s[0]} (in tx ${txidToDisplay(s[1])}) vs ${h} (in tx ${txidToDisplay(p.txid)})`,
        );
      if (!s) seen.set(k, [h, p.txid]);
    }
}

/** `check_scroll_outputs_are_listed`. */
function checkScrollOutputsAreListed(spell: NormalizedSpell): void {
  const n = spell.tx.outs.length;
  for (const i of spell.tx.scrolls ?? []) if (i >= n) throw rule(`\`tx.scrolls\` references output #${i} but the spell only has ${n} output(s)`);
  const apps = appsOf(spell);
  spell.tx.outs.forEach((out, i) => {
    if ([...out.keys()].some((k) => apps[k]?.tag === 's') && !(spell.tx.scrolls ?? []).includes(i))
      throw rule(`output #${i} carries a SCROLL-tagged charm but is not listed in \`tx.scrolls\``);
  });
}

/** `hosting_chain_is_bitcoin`: the chain of the transaction that created the first input. */
function hostingChainIsBitcoin(spell: NormalizedSpell, prev: Map<string, PrevSpell>): boolean {
  const first = spell.tx.ins?.[0];
  return !!first && prev.get(toHex(first.txid))?.tx.chain === 'bitcoin';
}

/** `check_app_version_continuity`, per spent input and app. */
function checkAppVersionContinuity(spell: NormalizedSpell, prev: Map<string, PrevSpell>, beamedFrom: Map<number, BeamSource>): void {
  const referencedVks = new Set(appsOf(spell).map((a) => toHex(a.vk)));
  for (const s of spentSources(spell, prev, beamedFrom))
    for (const [app] of s.charms) {
      const where = `input #${s.i} (${utxoIdToString(s.src)}), app ${appToString(app)}`;
      const prevVa = versionedOf(s.prevSpell, app.vk);
      const curVa = versionedOf(spell, app.vk);
      if (!prevVa) {
        if (curVa)
          throw rule(
            `${where}: the spent charm is from a previous spell that treated this app as simple (no \`versioned_apps\` entry); the spending spell cannot retroactively declare it versioned`,
          );
        continue;
      }
      if (!referencedVks.has(toHex(app.vk))) continue;
      if (!curVa)
        throw rule(
          `input #${s.i} (${utxoIdToString(s.src)}): spent charm with versioned app ${appToString(app)} is referenced in the spending spell, but the spending spell does not declare it in \`versioned_apps\``,
        );
      if (prevVa.version === 0 && curVa.version !== 0) throw rule(`${where}: spent version is 0, spending spell version must also be 0 (got ${curVa.version})`);
      if (prevVa.version !== 0 && curVa.version !== 0 && curVa.version < prevVa.version)
        throw rule(`${where}: spending version (${curVa.version}) must be 0, equal to, or higher than the spent version (${prevVa.version})`);
      if (curVa.version === prevVa.version && !equalBytes(curVa.wasm_hash, prevVa.wasm_hash))
        throw rule(
          `${where}: spending and spent versions are both ${curVa.version}, but Wasm hashes differ (spent: ${toHex(prevVa.wasm_hash)}, spending: ${toHex(curVa.wasm_hash)})`,
        );
    }
}

/** `collect_version_changed_apps`: apps (by string) whose version differs from a spent charm's. */
function collectVersionChangedApps(spell: NormalizedSpell, prev: Map<string, PrevSpell>, beamedFrom: Map<number, BeamSource>): Set<string> {
  const changed = new Set<string>();
  for (const s of spentSources(spell, prev, beamedFrom))
    for (const [app] of s.charms) {
      const p = versionedOf(s.prevSpell, app.vk);
      const c = versionedOf(spell, app.vk);
      if (p && c && p.version !== c.version) changed.add(appToString(app));
    }
  return changed;
}

/** `verify_app_binary`: the binary is the app's (simple: vk = hash; versioned: pinned hash + signature). */
function verifyAppBinary(app: App, wasm: Uint8Array, spell: NormalizedSpell, sigs: Map<string, AppSignature>): void {
  const name = appToString(app);
  const hash = vkOfBinary(wasm);
  const va = versionedOf(spell, app.vk);
  if (!va) {
    if (sigs.has(toHex(app.vk))) throw rule(`signature provided for non-versioned app: ${name}`);
    if (!equalBytes(app.vk, hash)) throw rule(`app.vk mismatch (binary hash) for app: ${name}`);
    return;
  }
  if (!equalBytes(va.wasm_hash, hash)) throw rule(`Wasm hash mismatch for versioned app: ${name}`);
  const sig = sigs.get(toHex(app.vk));
  if (!sig) throw rule(`missing signature for versioned app: ${name}`);
  if (!equalBytes(vkOfPublicKey(sig.public_key), app.vk)) throw rule(`public key hash does not match app.vk: ${name}`);
  if (!verifyBinarySignature(sig, wasm)) throw rule(`BIP-340 Schnorr signature verification failed for ${name}`);
}

const oneLine = (s: string, max = 400) => {
  const t = s.trim().split(/\r?\n/).filter(Boolean).join(' | ');
  return t.length > max ? `…${t.slice(t.length - max)}` : t;
};

/**
 * Checks the spell as `spell check` and the prover do: the request shape, then `is_correct`
 * (finality of beaming sources, well-formedness, charms of the inputs, versioned apps, Scrolls),
 * then runs every app contract that is not skipped as a simple transfer.
 */
export async function checkSpell(a: CheckArgs): Promise<CheckResult> {
  try {
    return await checkSpellRules(a);
  } catch (e) {
    // Outside mock mode a mock prerequisite spell counts as none, so the error blames something
    // else (a contract, a missing charm): say which prev tx carries one and how to accept it.
    const mocks = a.mock || a.spell.mock || !(e instanceof CharmsError) ? [] : mockSpellTxids(a.prev_txs);
    if (mocks.length === 0) throw e;
    throw new CharmsError(
      (e as CharmsError).code,
      `${(e as CharmsError).message}; note: prev tx ${mocks.join(', ')} carries a mock spell, which counts as no spell (no charms) without mock mode: pass --mock (spell check / spell prove --mock, charms server --mock) to accept mock spells`,
      { cause: e },
    );
  }
}

async function checkSpellRules(a: CheckArgs): Promise<CheckResult> {
  const notices: string[] = [];
  const { spell, prev, tx, needsRun, privates, binaries } = validateProveRequestShape(a);
  const beamedFrom = a.tx_ins_beamed_source_utxos;
  // the rest of is_correct (beaming finality and well_formed ran in the shape check)
  checkPrevTxidsMatchInputs(spell, prev, beamedFrom);
  checkInputAppsAreReferenced(spell, prev, beamedFrom);
  checkPrevVersionedAppsConsistency(prev);
  checkScrollOutputsAreListed(spell);
  // `check_scroll_outputs`: without the Scrolls canister's signed scriptPubKey map, listed Scrolls
  // outputs are "not yet bound"; with it, each dest must be the signed script and the signature verify.
  const scrollsBound = !hostingChainIsBitcoin(spell, prev) || checkScrollOutputs(spell, a.scrollOutputs, a.scrollsKey);
  if (!scrollsBound)
    notices.push('warning: spell has Scrolls outputs whose scriptPubKeys are not yet bound; binding happens at proving time on the prover server');
  checkAppVersionContinuity(spell, prev, beamedFrom);
  const changed = collectVersionChangedApps(spell, prev, beamedFrom);
  const apps = appsOf(spell);
  const noAppInput = binaries.size === 0 && a.app_signatures.length === 0;
  if (changed.size > 0 && noAppInput)
    throw rule(
      `no app binaries provided, but versioned-app version changes were declared for: [${[...changed].join(', ')}]; a version change requires running the new app binary to authorize the transition`,
    );
  for (const app of apps) {
    const name = appToString(app);
    const va = versionedOf(spell, app.vk);
    if (changed.has(name) && va && !binaries.has(toHex(va.wasm_hash)))
      throw rule(
        `app ${name}: version is changing to ${va.version}; its new binary (wasm_hash ${toHex(va.wasm_hash)}) must be supplied so the new contract can run and authorize the transition`,
      );
  }
  if (noAppInput) {
    // `is_correct` without app input: every app must be a simple transfer (already ensured above).
    for (const app of apps) notices.push(`➡️  simple transfer w.r.t. app: ${appToString(app)}`);
    return { cycles: apps.map(() => 0n), notices, scrollsBound, spell };
  }
  // run_all
  const sigs = new Map(a.app_signatures.map(([vk, s]) => [toHex(vk), s]));
  const cycles: bigint[] = [];
  for (const [i, app] of apps.entries()) {
    const name = appToString(app);
    if (!changed.has(name) && !needsRun[i]) {
      notices.push(`➡️  simple transfer w.r.t. app: ${name}`);
      cycles.push(0n);
      continue;
    }
    const wasm = binaries.get(binaryKey(spell, app));
    if (!wasm) throw rule(`all apps should run successfully: app binary not found: ${name}`);
    verifyAppBinary(app, wasm, spell, sigs);
    const va = versionedOf(spell, app.vk);
    const stdin = appStdin(app, tx, spell.app_public_inputs[i]![1], privates.get(name) ?? null);
    const r = await a.runApp({ wasm, stdin, ...(va ? { expectedVersion: va.version } : {}) });
    if (r.stderr) a.onAppStderr?.(app, r.stderr);
    if (!r.ok) {
      const why = [r.error, r.stderr ? `stderr: ${oneLine(r.stderr)}` : ''].filter(Boolean).join('; ');
      throw new CharmsError('APP_FAILED', `all apps should run successfully: app contract for ${name} rejected the transaction${why ? ` (${why})` : ''}`);
    }
    notices.push(`✅  app contract satisfied: ${name}`);
    cycles.push(r.cycles);
  }
  return { cycles, notices, scrollsBound, spell };
}
