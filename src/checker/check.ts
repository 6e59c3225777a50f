/**
 * The spell checker: the protocol's correctness rules (a port of the reference's `is_correct`
 * family and the prover's request checks) and the app contract runs. Errors name the rule that
 * failed and the app or input concerned.
 */
import { CharmsError } from '../errors.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { compareBytes, equalBytes, toHex } from '../util/bytes.js';
import {
  appToString,
  compareApps,
  utxoIdToBytes,
  utxoIdToString,
  type App,
  type B32,
  type Data,
  type UtxoId,
} from '../model/primitives.js';
import { CURRENT_VERSION, type AppSignature, type BeamSource, type NormalizedSpell, type VersionedApp } from '../model/spell.js';
import type { Chain, ChainTx } from '../model/request.js';
import { checkAppSignature, vkOfBinary } from '../keys/app-key.js';
import { appStdin, type AppTransaction, type Charms } from './app-input.js';
import { prevSpells, type PrevSpell } from './prev-spells.js';
import { isSimpleTransfer } from './transfer.js';
import { fromHex } from '../util/bytes.js';
import { parseTx, txid as bitcoinTxid } from '../bitcoin/tx.js';
import { verifyBitcoinFinality } from '../bitcoin/finality.js';
import { cardanoTxid, parseCardanoTx } from '../cardano/tx.js';
import { verifyCardanoFinality } from '../cardano/finality.js';

import type { RunResult } from '../runner/index.js';
export type RunApp = (args: { wasm: Uint8Array; stdin: Uint8Array; expectedVersion?: number }) => Promise<RunResult>;

export interface CheckArgs {
  spell: NormalizedSpell;
  prevTxs: ChainTx[];
  privateInputs: [App, Data][];
  beamedFrom: Map<number, BeamSource>;
  /** App binaries by SHA-256 (hex). */
  binaries: Map<string, Uint8Array>;
  appSignatures: [B32, AppSignature][];
  chain: Chain;
  /** Accept mock proofs in prerequisite transactions. */
  mock: boolean;
  runApp: RunApp;
  /** Receives each app's stderr (how a contract explains a rejection). */
  onAppStderr?: (app: App, text: string) => void;
}

export interface CheckResult {
  /** Cycles per app, in app order (0 for simple transfers). */
  cycles: bigint[];
  /** Simple-transfer notices and warnings, for stderr. */
  notices: string[];
}

const rule = (msg: string) => new CharmsError('INVALID_SPELL', msg);
const isEmpty = (d: Data | undefined) => d === undefined || d === null;

function appsOf(spell: NormalizedSpell): App[] {
  return spell.app_public_inputs.map(([a]) => a);
}

/** Charms of one normalized output, resolved to apps. */
function charmsOf(spell: NormalizedSpell, outIndex: number): Charms | undefined {
  const apps = appsOf(spell);
  const n = spell.tx.outs[outIndex];
  if (!n || n.size === 0) return undefined;
  return [...n.entries()].map(([i, d]) => [apps[i]!, d] as [App, Data]);
}

const beamedOutHash = (spell: NormalizedSpell, i: number): B32 | undefined => spell.tx.beamed_outs?.get(i);

function utxoHashWithNonce(u: UtxoId, nonce?: bigint): Uint8Array {
  const b = utxoIdToBytes(u);
  if (nonce === undefined) return sha256(b);
  const n = new Uint8Array(8);
  new DataView(n.buffer).setBigUint64(0, nonce, true);
  return sha256(new Uint8Array([...b, ...n]));
}

function versionedOf(spell: NormalizedSpell, vk: B32): VersionedApp | undefined {
  return spell.versioned_apps.find(([k]) => equalBytes(k, vk))?.[1];
}

/** Shape checks the CLI and the prover make before `is_correct`. */
export function checkRequestShape(spell: NormalizedSpell, prevTxIds: Set<string>, beamedFrom: Map<number, BeamSource>, chain: Chain): void {
  const ins = spell.tx.ins;
  if (!ins) throw rule('spell.tx.ins must be present');
  const seen = new Set<string>();
  for (const u of ins) {
    const k = utxoIdToString(u);
    if (seen.has(k)) throw rule(`spell.tx.ins contains duplicate UTXO: ${k}`);
    seen.add(k);
  }
  const has = (u: UtxoId) => prevTxIds.has(toHex(u.txid));
  if (!ins.every(has)) throw rule('prev_txs MUST contain transactions creating input UTXOs');
  if (!(spell.tx.refs ?? []).every(has)) throw rule('prev_txs MUST contain transactions creating ref UTXOs');
  for (const [i, b] of beamedFrom) {
    const u = ins[i];
    if (!u || !has(u) || !has(b.utxo)) throw rule('prev_txs MUST contain transactions creating beaming source and destination UTXOs');
  }
  const required = new Set([...ins, ...(spell.tx.refs ?? []), ...[...beamedFrom.values()].map((b) => b.utxo)].map((u) => toHex(u.txid)));
  const same = required.size === prevTxIds.size && [...required].every((t) => prevTxIds.has(t));
  if (!same) {
    const show = (s: Set<string>) => [...s].map((h) => toHex(Uint8Array.from(Buffer.from(h, 'hex')).reverse())).join(', ');
    throw rule(
      `prev_txs must contain exactly the transactions producing spell inputs and beaming sources. Required: {${show(required)}} Provided: {${show(prevTxIds)}}`,
    );
  }
  const coins = spell.tx.coins;
  if (!coins) throw rule('coins must be present');
  if (coins.length !== spell.tx.outs.length) throw rule(`coins length (${coins.length}) must match outs length (${spell.tx.outs.length})`);
  if (chain === 'bitcoin') coins.forEach((c, i) => {
    if (c.content !== undefined) throw rule(`coins[${i}].content must be None for Bitcoin`);
  });
  const vks = new Set(appsOf(spell).map((a) => toHex(a.vk)));
  for (const [vk] of spell.versioned_apps) if (!vks.has(toHex(vk))) throw rule(`versioned_apps contains unused vk: ${toHex(vk)}`);
}

/** Every beaming source transaction must come with a finality proof that verifies. */
function checkBeamingFinality(prevTxs: ChainTx[], beamedFrom: Map<number, BeamSource>): void {
  const byTxid = new Map<string, ChainTx>();
  for (const t of prevTxs) {
    const bytes = fromHex(t.hex, 'prev_txs');
    byTxid.set(toHex(t.chain === 'bitcoin' ? bitcoinTxid(parseTx(bytes)) : cardanoTxid(parseCardanoTx(bytes))), t);
  }
  for (const [i, b] of beamedFrom) {
    const t = byTxid.get(toHex(b.utxo.txid));
    const final =
      t?.chain === 'bitcoin'
        ? !!t.proof && verifyBitcoinFinality(t.hex, t.proof.proof, t.proof.headers)
        : t?.chain === 'cardano'
          ? t.signature !== undefined && verifyCardanoFinality(fromHex(t.hex), fromHex(t.signature))
          : false;
    if (!final)
      throw rule(
        `input #${i}: the beaming source transaction ${utxoIdToString(b.utxo).split(':')[0]} needs a valid finality proof in prev_txs ({bitcoin: {tx, proof, headers}} or {cardano: {tx, signature}})`,
      );
  }
}

/** `well_formed` with each condition named. */
function wellFormed(spell: NormalizedSpell, prev: Map<string, PrevSpell>, beamedFrom: Map<number, BeamSource>): void {
  if (spell.version !== CURRENT_VERSION) throw rule(`spell version ${spell.version} is not the current protocol version ${CURRENT_VERSION}`);
  const apps = appsOf(spell);
  spell.tx.outs.forEach((out, o) => {
    for (const [i, d] of out) {
      const app = apps[i];
      if (!app) throw rule(`tx.outs[${o}] refers to app index ${i}, but app_public_inputs has ${apps.length} app(s)`);
      if (app.tag === 't') {
        if (typeof d !== 'bigint' || d < 0n || d >= 1n << 64n) throw rule(`tx.outs[${o}]: amount of token ${appToString(app)} must be an unsigned integer`);
        if (d === 0n) throw rule(`zero output amount for app ${appToString(app)}`);
      }
    }
  });
  const ins = spell.tx.ins!;
  const created = (u: UtxoId): boolean => {
    const p = prev.get(toHex(u.txid));
    return !!p && u.vout <= p.numOuts && !beamedOutHash(p.spell, u.vout);
  };
  for (const u of ins) if (!created(u)) throw rule(`input ${utxoIdToString(u)} is not created by the given prev_txs (or was beamed out)`);
  for (const u of spell.tx.refs ?? []) if (!created(u)) throw rule(`ref ${utxoIdToString(u)} is not created by the given prev_txs`);
  for (const [i, b] of beamedFrom) {
    const dest = ins[i];
    if (!dest) throw rule(`beamed-from refers to input #${i}, but the spell has ${ins.length} input(s)`);
    const destPrev = prev.get(toHex(dest.txid));
    if (!destPrev) throw rule(`input #${i}: its transaction is missing from prev_txs`);
    const destCharms = charmsOf(destPrev.spell, dest.vout);
    if (destCharms && !beamedOutHash(destPrev.spell, dest.vout)) throw rule(`input #${i}: the beaming destination already carries charms`);
    const src = prev.get(toHex(b.utxo.txid));
    const hash = src && beamedOutHash(src.spell, b.utxo.vout);
    if (!hash || !equalBytes(hash, utxoHashWithNonce(dest, b.nonce)))
      throw rule(`input #${i}: beaming source ${utxoIdToString(b.utxo)} was not beamed to ${utxoIdToString(dest)}`);
  }
}

/** The `charms_data::Transaction` apps see. */
function toAppTransaction(spell: NormalizedSpell, prev: Map<string, PrevSpell>, beamedFrom: Map<number, BeamSource>): AppTransaction {
  const ins = spell.tx.ins!;
  const beamSourceOf = new Map<string, UtxoId>();
  for (const [i, b] of beamedFrom) beamSourceOf.set(utxoIdToString(ins[i]!), b.utxo);
  const fromUtxo = (u: UtxoId): [UtxoId, Charms] => {
    const p = prev.get(toHex(u.txid))!;
    let charms = charmsOf(p.spell, u.vout);
    if (!charms) {
      const src = beamSourceOf.get(utxoIdToString(u));
      if (src) charms = charmsOf(prev.get(toHex(src.txid))!.spell, src.vout);
    }
    return [u, charms ?? []];
  };
  const apps = appsOf(spell);
  return {
    ins: ins.map(fromUtxo),
    refs: (spell.tx.refs ?? []).map(fromUtxo),
    outs: spell.tx.outs.map((n) => [...n.entries()].map(([i, d]) => [apps[i]!, d] as [App, Data])),
    coinIns: ins.map((u) => {
      const c = prev.get(toHex(u.txid))!.spell.tx.coins?.[u.vout];
      if (!c) throw rule(`utxo not found in prev_txs: ${utxoIdToString(u)}`);
      return c;
    }),
    ...(spell.tx.coins ? { coinOuts: spell.tx.coins } : {}),
    prevTxs: [...prev.values()].map((p) => [p.txid, p.tx] as [Uint8Array, ChainTx]),
    appPublicInputs: spell.app_public_inputs,
  };
}

/** Source prev spell and UTXO of each input (the beaming source for beamed inputs). */
function inputSources(spell: NormalizedSpell, prev: Map<string, PrevSpell>, beamedFrom: Map<number, BeamSource>) {
  return spell.tx.ins!.map((u, i) => {
    const src = beamedFrom.get(i)?.utxo ?? u;
    const p = prev.get(toHex(src.txid));
    if (!p) throw rule(`missing prev spell for input utxo ${utxoIdToString(src)} (input #${i})`);
    return { i, src, prevSpell: p.spell, charms: charmsOf(p.spell, src.vout) ?? [] };
  });
}

function checkVersionedApps(spell: NormalizedSpell, prev: Map<string, PrevSpell>, beamedFrom: Map<number, BeamSource>): Set<string> {
  const referenced = new Set(appsOf(spell).map(appToString));
  const referencedVks = new Set(appsOf(spell).map((a) => toHex(a.vk)));
  const changed = new Set<string>();
  // consistency of (vk, version) → wasm_hash across prev spells
  const seen = new Map<string, string>();
  for (const p of prev.values())
    for (const [vk, va] of p.spell.versioned_apps) {
      const k = `${toHex(vk)}/${va.version}`;
      const h = toHex(va.wasm_hash);
      if (seen.has(k) && seen.get(k) !== h) throw rule(`inconsistent Wasm hash for versioned app (vk=${toHex(vk)}, version=${va.version})`);
      seen.set(k, h);
    }
  for (const s of inputSources(spell, prev, beamedFrom)) {
    for (const [app] of s.charms) {
      const name = appToString(app);
      if (!referenced.has(name))
        throw rule(
          `input #${s.i} (${utxoIdToString(s.src)}) carries a charm for app ${name}, but the spending spell does not list it in app_public_inputs`,
        );
      const prevVa = versionedOf(s.prevSpell, app.vk);
      const curVa = versionedOf(spell, app.vk);
      if (!prevVa) {
        if (curVa) throw rule(`input #${s.i}, app ${name}: the spent charm's spell treated this app as immutable; the spending spell cannot declare it versioned`);
        continue;
      }
      if (!referencedVks.has(toHex(app.vk))) continue;
      if (!curVa) throw rule(`input #${s.i}, app ${name}: versioned app missing from versioned_apps of the spending spell`);
      if (prevVa.version === 0 && curVa.version !== 0) throw rule(`input #${s.i}, app ${name}: spent version is 0, the spending version must also be 0 (got ${curVa.version})`);
      if (prevVa.version !== 0 && curVa.version !== 0 && curVa.version < prevVa.version)
        throw rule(`input #${s.i}, app ${name}: spending version (${curVa.version}) must be 0, equal to, or higher than the spent version (${prevVa.version})`);
      if (curVa.version === prevVa.version && !equalBytes(curVa.wasm_hash, prevVa.wasm_hash))
        throw rule(`input #${s.i}, app ${name}: same version ${curVa.version} but different Wasm hashes`);
      if (curVa.version !== prevVa.version) changed.add(name);
    }
  }
  return changed;
}

function checkScrollsListed(spell: NormalizedSpell): void {
  const n = spell.tx.outs.length;
  for (const i of spell.tx.scrolls ?? []) if (i >= n) throw rule(`tx.scrolls references output #${i} but the spell only has ${n} output(s)`);
  const apps = appsOf(spell);
  spell.tx.outs.forEach((out, i) => {
    if ([...out.keys()].some((k) => apps[k]?.tag === 's') && !(spell.tx.scrolls ?? []).includes(i))
      throw rule(`output #${i} carries a SCROLL-tagged charm but is not listed in tx.scrolls`);
  });
}

export async function checkSpell(a: CheckArgs): Promise<CheckResult> {
  const { spell } = a;
  const notices: string[] = [];
  const prev = prevSpells(a.prevTxs, a.mock || spell.mock);
  checkRequestShape(spell, new Set(prev.keys()), a.beamedFrom, a.chain);
  checkBeamingFinality(a.prevTxs, a.beamedFrom);
  wellFormed(spell, prev, a.beamedFrom);
  const changed = checkVersionedApps(spell, prev, a.beamedFrom);
  checkScrollsListed(spell);
  if ((spell.tx.scrolls ?? []).length > 0 && a.chain === 'bitcoin')
    notices.push('warning: spell has Scrolls outputs whose scriptPubKeys are not yet bound; binding happens at proving time on the prover server');
  const tx = toAppTransaction(spell, prev, a.beamedFrom);
  const privates = new Map(a.privateInputs.map(([app, d]) => [appToString(app), d]));
  const sigs = new Map(a.appSignatures.map(([vk, s]) => [toHex(vk), s]));
  // Which apps need their contract run, and hence their binary (and signature if versioned).
  const apps = appsOf(spell);
  const needsRun = apps.map((app, i) => {
    const x = spell.app_public_inputs[i]![1];
    const w = privates.get(appToString(app));
    return changed.has(appToString(app)) || !isEmpty(x) || !isEmpty(w) || !isSimpleTransfer(app, tx);
  });
  const binaryKey = (app: App) => toHex(versionedOf(spell, app.vk)?.wasm_hash ?? app.vk);
  if (a.binaries.size === 0 && a.appSignatures.length === 0) {
    const nonSimple = apps.filter((app, i) => needsRun[i]).map(appToString);
    if (nonSimple.length > 0)
      throw rule(
        `no app binaries provided, but the spell is not a simple transfer for: [${nonSimple.join(', ')}]; provide the app binaries (--app-bins) so the contracts can run`,
      );
  } else {
    const required = new Set(apps.filter((_, i) => needsRun[i]).map(binaryKey));
    const provided = new Set(a.binaries.keys());
    if (required.size !== provided.size || [...required].some((k) => !provided.has(k)))
      throw rule(
        `binaries must contain exactly the required app binaries. Required binary hashes: {${[...required].join(', ')}} Provided binary hashes: {${[...provided].join(', ')}}`,
      );
    const requiredSigs = new Set(apps.filter((app, i) => needsRun[i] && versionedOf(spell, app.vk)).map((app) => toHex(app.vk)));
    if (requiredSigs.size !== sigs.size || [...requiredSigs].some((k) => !sigs.has(k)))
      throw rule(
        `app_signatures must contain exactly one entry per non-simple-transfer versioned app referenced in the spell. Required app vks: {${[...requiredSigs].join(', ')}} Provided app vks: {${[...sigs.keys()].join(', ')}}`,
      );
  }
  const cycles: bigint[] = [];
  for (let i = 0; i < apps.length; i++) {
    const app = apps[i]!;
    const name = appToString(app);
    if (!needsRun[i]) {
      notices.push(`➡️  simple transfer w.r.t. app: ${name}`);
      cycles.push(0n);
      continue;
    }
    const wasm = a.binaries.get(binaryKey(app));
    if (!wasm) throw rule(`app binary not found: ${name}`);
    const va = versionedOf(spell, app.vk);
    if (!va) {
      if (sigs.has(toHex(app.vk))) throw rule(`signature provided for non-versioned app: ${name}`);
      if (!equalBytes(vkOfBinary(wasm), app.vk)) throw rule(`app.vk mismatch (binary hash) for app: ${name}`);
    } else {
      if (!equalBytes(vkOfBinary(wasm), va.wasm_hash)) throw rule(`Wasm hash mismatch for versioned app: ${name}`);
      const sig = sigs.get(toHex(app.vk));
      if (!sig) throw rule(`missing signature for versioned app: ${name}`);
      checkAppSignature(app.vk, sig, wasm);
    }
    const stdin = appStdin(app, tx, spell.app_public_inputs[i]![1], privates.get(name) ?? null);
    const r = await a.runApp({ wasm, stdin, ...(va ? { expectedVersion: va.version } : {}) });
    if (r.stderr) a.onAppStderr?.(app, r.stderr);
    if (!r.ok)
      throw new CharmsError(
        'APP_FAILED',
        `all apps should run successfully: app contract for ${name} rejected the transaction${r.error ? ` (${r.error})` : ''}`,
      );
    notices.push(`✅  app contract satisfied: ${name}`);
    cycles.push(r.cycles);
  }
  return { cycles, notices };
}

export { compareApps, compareBytes };
