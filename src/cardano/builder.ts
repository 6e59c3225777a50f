/**
 * Builds the Conway transaction that carries a proven spell on Cardano, following the
 * reference's builder (`src/tx/cardano_tx`), with canonical (sorted) map orders:
 *
 * - inputs = the spell's inputs (the ledger sorts them; the spell's order travels in the
 *   withdraw redeemer as a permutation);
 * - one output per coin: address, lovelace, the coin's `content` (foreign assets, datum, script
 *   reference) plus the native tokens (CNTs) of its charms (none when beamed out);
 * - the spell output: inline datum `bytes(CBOR((spell, proof)))` paid to the Cardano fee address,
 *   lovelace `b + b/10` with `b = (len(change address) + len(datum) + 50 + 160) × utxoCostPerByte`;
 * - mint = (CNTs + content assets of all outputs) − (assets of all spent inputs), with the apps'
 *   policy scripts and Mint redeemers; proxy scripts and Spend redeemers for inputs sitting at a
 *   proxy script address; fixed ex-units (the reference does not evaluate scripts);
 * - collateral, the protocol-version reference input, the Scrolls key as required signer, a
 *   withdraw-0 of the Scrolls stake validator with the Reward redeemer (the input permutation);
 * - `script_data_hash` over the redeemers and the PlutusV3 language view;
 * - fee by the reference's heuristic, then an ADA-only change output.
 *
 * Where the reference would silently build a transaction the ledger rejects, we refuse with an
 * INVALID_INPUT error that says what is wrong: input tokens no output keeps and no Charms policy
 * can burn, funds short of outputs + fee, outputs (or change) below the ledger's minimum UTxO,
 * a fee heuristic below the ledger minimum (several policies), a transaction too large.
 *
 * The result is unsigned: the Scrolls canister adds its vkey witness (body untouched) and the
 * user adds the witnesses of the inputs and the collateral before submitting.
 * Browser-safe: no Node built-ins.
 */
import { blake2b } from '@noble/hashes/blake2.js';
import { CharmsError } from '../errors.js';
import { CborWriter, decodeCbor } from '../codec/cbor.js';
import { outputContentValue } from './content.js';
import { ValueMap } from '../codec/value.js';
import { compareBytes, concatBytes, fromHex, toHex, reversed, utf8, equalBytes } from '../util/bytes.js';
import { utxoIdToString, type App, type Data, type UtxoId } from '../model/primitives.js';
import type { NormalizedSpell } from '../model/spell.js';
import { expectedTokens, isTokenApp, policyIdForApp, CIP67_NFT_LABEL } from './assets.js';
import { appliedProxyScript, scriptHash } from './script-template.js';
import { proxyScriptForApps } from './scripts.js';
import { parseCardanoTx, cardanoTxid, parseOutputs, type Assets, type CardanoOutput } from './tx.js';
import { plutusDataCbor, plutusDataFromDetailedJson, writePlutusBytes } from './plutus-encode.js';
import { MAINNET_PROTOCOL_PARAMS, type CardanoProtocolParams } from './protocol-params.js';
import { cardanoAddressBytes, validateShelleyAddress } from './address.js';

/** The V15 protocol-version NFT UTxO (carries the Scrolls withdraw script as reference script). */
export const V15_REFERENCE_INPUT = { hash: '571e628237e20f35f55d62890d75a5cf9e2e43ceaaf0c8ec0c86ac56e4648e0c', index: 0 } as const;
/** Script hash of the Scrolls withdraw (stake) validator. */
const SCROLLS_WITHDRAW_SCRIPT_HASH_HEX = '29764648940a3b7208bc99a246bc96a69817bea017560972432f076f';
/** Hash of the Scrolls Ed25519 key: the required signer the validator checks for. */
export const SCROLLS_VKEY_HASH_HEX = '15bf560dabf4fe7f7ef78ac49c4fa846ebcde7009b1e886dd70d350d';
/** The reference's default Cardano fee address (mainnet). */
export const DEFAULT_CARDANO_FEE_ADDRESS =
  'addr1qyp2t40fprytezw5nnlj6qjxn82ck3yhkvdy3ze9muqzvj2x2862gdndh8y3vc3yja94sf98cyyu2qsjhy8y5949w37qyt3lnt';

/** Fixed ex-units of mint/spend redeemers and of the withdraw redeemer (the reference's). */
const MINT_SPEND_EX_UNITS = { mem: 250_000n, steps: 150_000_000n } as const;
const WITHDRAW_EX_UNITS = { mem: 50_000n, steps: 30_000_000n } as const;
/** The reference's fee heuristic: fee field while sizing, per-witness and change allowances. */
const FEE_PLACEHOLDER = 500_000n;
const SIGNATURE_OVERHEAD = 110n;
const CHANGE_OUTPUT_OVERHEAD = 70n;
const REF_SCRIPT_FEE_ESTIMATE = 75_000n;
/**
 * For our ledger-minimum lower bound: two vkey witnesses (the Scrolls key and one user key),
 * each `[bytes32, bytes64]` (101 bytes), plus the witness-set entry (key, tag 258, array head).
 */
const VKEY_WITNESS_BYTES = 2n * 101n + 5n;

const REDEEMER_SPEND = 0;
const REDEEMER_MINT = 1;
const REDEEMER_REWARD = 3;

const refuse = (m: string) => new CharmsError('INVALID_INPUT', `cannot build the Cardano transaction: ${m}`);

export interface CardanoBuildArgs {
  /** The spell as proven: `ins` and `coins` (with `content`) present. */
  spell: NormalizedSpell;
  /** The outputs the spell's inputs spend, in input order (see `resolvePrevOutputs`). */
  prevOutputs: CardanoOutput[];
  /** Charms held by each spell input (same order as `spell.tx.ins`), to find proxy spends and burns. */
  inputCharms: [App, Data][][];
  /** Raw change address bytes. */
  changeAddress: Uint8Array;
  /** Raw fee address bytes (the spell output's address). */
  feeAddress: Uint8Array;
  /** `CBOR((spell without ins/coins, proof))`. */
  spellData: Uint8Array;
  collateral: UtxoId;
  /** The protocol-version NFT UTxO; default the V15 one. */
  referenceInput?: UtxoId;
  /** The Scrolls withdraw validator's script hash; default the protocol's (a stand-in for script evaluation). */
  scrollsWithdrawScriptHash?: Uint8Array;
  params?: CardanoProtocolParams;
}

export interface CardanoBuildResult {
  tx: Uint8Array;
  fee: bigint;
  /** `permutation[i]` = position of the spell's i-th input among the sorted tx inputs. */
  permutation: number[];
  scriptDataHash: Uint8Array;
  /** Lovelace of the spell output. */
  spellOutputLovelace: bigint;
  change?: bigint;
}

// ------------------------------------------------------------------------------ assets

const addAsset = (m: Assets, p: string, a: string, q: bigint): void => {
  const inner = m.get(p) ?? new Map<string, bigint>();
  inner.set(a, (inner.get(a) ?? 0n) + q);
  m.set(p, inner);
};

const addAll = (into: Assets, from: Assets): void => {
  for (const [p, m] of from) for (const [a, q] of m) addAsset(into, p, a, q);
};

const byHexBytes = (a: string, b: string): number => compareBytes(fromHex(a), fromHex(b));

/** A multi-asset map, both levels sorted by raw bytes (canonical CBOR for byte strings of these lengths). */
function writeMultiAsset(w: CborWriter, m: Assets, signed = false): void {
  const policies = [...m.keys()].filter((p) => m.get(p)!.size > 0).sort(byHexBytes);
  w.mapHeader(policies.length);
  for (const p of policies) {
    w.bytes(fromHex(p));
    const inner = m.get(p)!;
    const names = [...inner.keys()].sort(byHexBytes);
    w.mapHeader(names.length);
    for (const a of names) {
      w.bytes(fromHex(a));
      const q = inner.get(a)!;
      if (!signed && q < 0n) throw new CharmsError('INTERNAL', 'negative output asset');
      w.int(q);
    }
  }
}

// ------------------------------------------------------------------------------ content

interface OutputSpec {
  address: Uint8Array;
  lovelace: bigint;
  assets: Assets;
  datum?: { hash: Uint8Array } | { inlineCbor: Uint8Array };
  /** `[kind, bytes]` of the script reference. */
  scriptRef?: [number, Uint8Array];
}

const U64_MAX = (1n << 64n) - 1n;
const SCRIPT_KINDS: Record<string, number> = { PlutusV1: 1, PlutusV2: 2, PlutusV3: 3 };

/** A coin's `content` (the CML serde form of `OutputContent`) as the output parts it stands for. */
export function parseContent(content: Data | undefined, path: string): Pick<OutputSpec, 'assets' | 'datum' | 'scriptRef'> {
  const out: Pick<OutputSpec, 'assets' | 'datum' | 'scriptRef'> = { assets: new Map() };
  if (content === undefined || content === null) return out;
  if (!(content instanceof ValueMap)) throw refuse(`${path}: content must be a map {multiasset, datum?, script_ref?}`);
  for (const [k, v] of content.entries) {
    if (k === 'multiasset') {
      if (!(v instanceof ValueMap)) throw refuse(`${path}.multiasset: expected a map policy → asset → quantity`);
      for (const [p, inner] of v.entries) {
        if (typeof p !== 'string' || fromHex(p, `${path}.multiasset policy`).length !== 28 || !(inner instanceof ValueMap))
          throw refuse(`${path}.multiasset: policy ids are 28-byte hex keys with a map of assets`);
        for (const [a, q] of inner.entries) {
          if (typeof a !== 'string' || fromHex(a, `${path}.multiasset asset name`).length > 32)
            throw refuse(`${path}.multiasset.${p}: asset names are hex of at most 32 bytes`);
          if (typeof q !== 'bigint' || q <= 0n || q > U64_MAX) throw refuse(`${path}.multiasset.${p}.${a}: quantity must be a positive u64`);
          addAsset(out.assets, p.toLowerCase(), a.toLowerCase(), q);
        }
      }
    } else if (k === 'datum') {
      const hash = v instanceof ValueMap ? v.get('Hash') : undefined;
      const inline = v instanceof ValueMap ? v.get('Datum') : undefined;
      if (hash instanceof ValueMap && typeof hash.get('datum_hash') === 'string')
        out.datum = { hash: fromHex(hash.get('datum_hash') as string, `${path}.datum.Hash.datum_hash`, 32) };
      else if (inline instanceof ValueMap && inline.get('datum') !== undefined)
        out.datum = { inlineCbor: plutusDataCbor(plutusDataFromDetailedJson(inline.get('datum')!, `${path}.datum.Datum.datum`)) };
      else throw refuse(`${path}.datum: expected {Hash: {datum_hash}} or {Datum: {datum}}`);
    } else if (k === 'script_ref') {
      const entry = v instanceof ValueMap && v.entries.length === 1 ? v.entries[0]! : undefined;
      const kind = entry && typeof entry[0] === 'string' ? SCRIPT_KINDS[entry[0]] : undefined;
      const script = entry?.[1] instanceof ValueMap ? entry[1].get('script') : undefined;
      if (kind === undefined || typeof script !== 'string')
        throw refuse(`${path}.script_ref: expected {PlutusV1|PlutusV2|PlutusV3: {script: hex}} (native scripts are not supported)`);
      out.scriptRef = [kind, fromHex(script, `${path}.script_ref`)];
    } else throw refuse(`${path}: unknown content field ${JSON.stringify(k)}`);
  }
  return out;
}

/**
 * A coin's `content` in the form the read side derives from the built output (sorted assets,
 * lower-case hex, the datum's detailed JSON as decoded): what the proof must commit to.
 */
export function canonicalContent(content: Data | undefined, path: string): ValueMap {
  const parts = parseContent(content, path);
  const out: CardanoOutput = { address: new Uint8Array(0), lovelace: 0n, assets: parts.assets };
  if (parts.datum) out.datum = 'hash' in parts.datum ? { hash: parts.datum.hash } : { inline: decodeCbor(parts.datum.inlineCbor) };
  if (parts.scriptRef) out.scriptRef = [BigInt(parts.scriptRef[0]), parts.scriptRef[1]];
  return outputContentValue(out, parts.assets);
}

// ------------------------------------------------------------------------------ encoding

function writeOutput(w: CborWriter, o: OutputSpec): void {
  const n = 2 + (o.datum ? 1 : 0) + (o.scriptRef ? 1 : 0);
  w.mapHeader(n);
  w.int(0);
  w.bytes(o.address);
  w.int(1);
  const hasAssets = [...o.assets.values()].some((m) => m.size > 0);
  if (hasAssets) {
    w.arrayHeader(2);
    w.int(o.lovelace);
    writeMultiAsset(w, o.assets);
  } else w.int(o.lovelace);
  if (o.datum) {
    w.int(2);
    w.arrayHeader(2);
    if ('hash' in o.datum) {
      w.int(0);
      w.bytes(o.datum.hash);
    } else {
      w.int(1);
      w.head(6, 24);
      w.bytes(o.datum.inlineCbor);
    }
  }
  if (o.scriptRef) {
    w.int(3);
    const inner = new CborWriter();
    inner.arrayHeader(2);
    inner.int(o.scriptRef[0]);
    inner.bytes(o.scriptRef[1]);
    w.head(6, 24);
    w.bytes(inner.finish());
  }
}

const outputSize = (o: OutputSpec): number => {
  const w = new CborWriter();
  writeOutput(w, o);
  return w.finish().length;
};

/** The ledger's minimum lovelace of an output (Babbage rule: (160 + size) × coinsPerUTxOByte). */
const minLovelace = (o: OutputSpec, p: CardanoProtocolParams): bigint => (160n + BigInt(outputSize(o))) * p.utxoCostPerByte;

interface TxInputRef {
  hash: Uint8Array;
  index: number;
}

const inputRef = (u: UtxoId): TxInputRef => ({ hash: reversed(u.txid), index: u.vout });
const compareInputRefs = (a: TxInputRef, b: TxInputRef): number => compareBytes(a.hash, b.hash) || a.index - b.index;

function writeInputSet(w: CborWriter, refs: TxInputRef[]): void {
  w.head(6, 258);
  w.arrayHeader(refs.length);
  for (const r of refs) {
    w.arrayHeader(2);
    w.bytes(r.hash);
    w.int(r.index);
  }
}

interface RedeemerSpec {
  tag: number;
  index: number;
  data: Uint8Array; // raw bounded bytes
  units: { mem: bigint; steps: bigint };
}

function redeemersCbor(rs: RedeemerSpec[]): Uint8Array {
  const w = new CborWriter();
  w.arrayHeader(rs.length);
  for (const r of rs) {
    w.arrayHeader(4);
    w.int(r.tag);
    w.int(r.index);
    writePlutusBytes(w, r.data);
    w.arrayHeader(2);
    w.int(r.units.mem);
    w.int(r.units.steps);
  }
  return w.finish();
}

/** The PlutusV3 language view `{2: [cost model]}` as hashed into `script_data_hash`. */
export function plutusV3LanguageView(p: CardanoProtocolParams): Uint8Array {
  const w = new CborWriter();
  w.mapHeader(1);
  w.int(2);
  w.arrayHeader(p.plutusV3CostModel.length);
  for (const c of p.plutusV3CostModel) w.int(c);
  return w.finish();
}

/** `script_data_hash` = blake2b-256(redeemers ‖ language views) (this builder attaches no datums). */
export const scriptDataHash = (redeemers: Uint8Array, p: CardanoProtocolParams): Uint8Array =>
  blake2b(concatBytes(redeemers, plutusV3LanguageView(p)), { dkLen: 32 });

/** The Mint/Spend redeemer bytes: NFT label ‖ "v<version>" (names the protocol-version NFT). */
export const versionRedeemer = (version: number): Uint8Array => concatBytes(CIP67_NFT_LABEL, utf8(`v${version}`));

/** Reward account of the Scrolls withdraw script: `0xF1 ‖ hash` on mainnet, `0xF0` elsewhere. */
export const scrollsRewardAccount = (networkId: number, scriptHash = fromHex(SCROLLS_WITHDRAW_SCRIPT_HASH_HEX)): Uint8Array =>
  concatBytes(Uint8Array.of(networkId === 1 ? 0xf1 : 0xf0), scriptHash);

/** `permutation[i]` = position of the spell's i-th input among the canonically sorted inputs. */
export function inputPermutation(ins: UtxoId[]): number[] {
  const order = ins.map((u, i) => ({ r: inputRef(u), i })).sort((a, b) => compareInputRefs(a.r, b.r));
  const perm = new Array<number>(ins.length).fill(0);
  order.forEach((x, pos) => (perm[x.i] = pos));
  return perm;
}

/** The spell output's lovelace (the reference's rule, from the change address length). */
export function spellOutputLovelace(changeAddressLength: number, datumCborLength: number, p: CardanoProtocolParams): bigint {
  const b = (BigInt(changeAddressLength) + BigInt(datumCborLength) + 50n + 160n) * p.utxoCostPerByte;
  return b + b / 10n;
}

/** The reference's fee heuristic over the size of the tx as built (fee placeholder, no change). */
export const heuristicFee = (txSize: number, p: CardanoProtocolParams): bigint =>
  p.txFeeFixed + p.txFeePerByte * (BigInt(txSize) + SIGNATURE_OVERHEAD + CHANGE_OUTPUT_OVERHEAD) + REF_SCRIPT_FEE_ESTIMATE;

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/** Price of ex-units: ⌈mem × priceMemory + steps × priceSteps⌉ (exact fractions). */
export function exUnitsFee(mem: bigint, steps: bigint, p: CardanoProtocolParams): bigint {
  const [mn, md] = p.priceMemory;
  const [sn, sd] = p.priceSteps;
  return ceilDiv(mem * mn * sd + steps * sn * md, md * sd);
}

// ------------------------------------------------------------------------------ build

interface Parts {
  inputs: TxInputRef[];
  outputs: OutputSpec[];
  fee: bigint;
  withdrawal: Uint8Array;
  mint: Assets;
  scriptDataHash: Uint8Array;
  collateral: TxInputRef;
  reference: TxInputRef;
  networkId: number;
  scripts: Uint8Array[];
  redeemers: Uint8Array;
}

function encodeTx(x: Parts): Uint8Array {
  const w = new CborWriter();
  w.arrayHeader(4);
  const hasMint = x.mint.size > 0;
  w.mapHeader(9 + (hasMint ? 1 : 0));
  w.int(0);
  writeInputSet(w, x.inputs);
  w.int(1);
  w.arrayHeader(x.outputs.length);
  for (const o of x.outputs) writeOutput(w, o);
  w.int(2);
  w.int(x.fee);
  w.int(5);
  w.mapHeader(1);
  w.bytes(x.withdrawal);
  w.int(0);
  if (hasMint) {
    w.int(9);
    writeMultiAsset(w, x.mint, true);
  }
  w.int(11);
  w.bytes(x.scriptDataHash);
  w.int(13);
  writeInputSet(w, [x.collateral]);
  w.int(14);
  w.head(6, 258);
  w.arrayHeader(1);
  w.bytes(fromHex(SCROLLS_VKEY_HASH_HEX));
  w.int(15);
  w.int(x.networkId);
  w.int(18);
  writeInputSet(w, [x.reference]);
  // witness set: redeemers (5) and PlutusV3 scripts (7); vkey witnesses are added by the signers
  w.mapHeader(x.scripts.length > 0 ? 2 : 1);
  w.int(5);
  w.raw(x.redeemers);
  if (x.scripts.length > 0) {
    w.int(7);
    w.head(6, 258);
    w.arrayHeader(x.scripts.length);
    for (const s of x.scripts) w.bytes(s);
  }
  w.byte(0xf5); // is_valid
  w.byte(0xf6); // no auxiliary data
  return w.finish();
}

/** The output of a previous Cardano tx each input spends (INVALID_INPUT when missing). */
export function resolvePrevOutputs(ins: UtxoId[], prevTxs: Uint8Array[]): CardanoOutput[] {
  const byId = new Map<string, CardanoOutput[]>();
  for (const bytes of prevTxs) {
    const tx = parseCardanoTx(bytes);
    byId.set(toHex(cardanoTxid(tx)), parseOutputs(tx));
  }
  return ins.map((u) => {
    const outs = byId.get(toHex(u.txid));
    if (outs === undefined) throw refuse(`input ${utxoIdToString(u)}: its transaction is not among the Cardano prev_txs`);
    const o = outs[u.vout];
    if (o === undefined) throw refuse(`input ${utxoIdToString(u)}: that transaction has only ${outs.length} output(s)`);
    return o;
  });
}

const paymentScriptHash = (address: Uint8Array): Uint8Array | undefined => {
  const type = address[0]! >> 4;
  return type <= 7 && (type & 1) === 1 && address.length >= 29 ? address.subarray(1, 29) : undefined;
};

export function buildCardanoTx(a: CardanoBuildArgs): CardanoBuildResult {
  const p = a.params ?? MAINNET_PROTOCOL_PARAMS;
  const spell = a.spell;
  const ins = spell.tx.ins ?? [];
  const coins = spell.tx.coins ?? [];
  if (ins.length === 0) throw refuse('the spell has no inputs (a Cardano transaction needs at least one)');
  if (coins.length !== spell.tx.outs.length) throw refuse(`coins (${coins.length}) must match outs (${spell.tx.outs.length})`);
  if (a.inputCharms.length !== ins.length) throw new CharmsError('INTERNAL', 'inputCharms must have one entry per input');
  const apps = spell.app_public_inputs.map(([app]) => app);
  const networkId = (a.changeAddress[0]! & 0x0f) === 1 ? 1 : 0;

  // Scripts the builder can attach: policies of the token apps in the spell and in the inputs.
  const policyScripts = new Map<string, Uint8Array>();
  const addPolicy = (app: App) => {
    if (isTokenApp(app)) policyScripts.set(toHex(policyIdForApp(app)), appliedProxyScript(app.vk));
  };
  apps.forEach(addPolicy);
  a.inputCharms.forEach((cs) => cs.forEach(([app]) => addPolicy(app)));

  // Outputs: content + CNTs of the charms (none if beamed out).
  const outputs: OutputSpec[] = coins.map((c, i) => {
    const parts = parseContent(c.content, `coins[${i}].content`);
    const beamed = spell.tx.beamed_outs?.has(i) ?? false;
    const charms = beamed ? [] : [...spell.tx.outs[i]!.entries()].map(([k, d]): [App, Data] => {
      const app = apps[k];
      if (app === undefined) throw refuse(`outs[${i}] refers to app #${k}, which the spell does not list`);
      return [app, d];
    });
    const assets: Assets = new Map();
    addAll(assets, parts.assets);
    addAll(assets, expectedTokens(charms));
    const o: OutputSpec = { address: c.dest, lovelace: c.amount, assets };
    if (parts.datum) o.datum = parts.datum;
    if (parts.scriptRef) o.scriptRef = parts.scriptRef;
    return o;
  });
  outputs.forEach((o, i) => {
    if (!validateShelleyAddress(o.address)) throw refuse(`coins[${i}].dest is not a Cardano Shelley address (raw address bytes in hex)`);
    if ((o.address[0]! & 0x0f) !== networkId) throw refuse(`coins[${i}].dest is on another network than the change address`);
    const min = minLovelace(o, p);
    if (o.lovelace < min) throw refuse(`coins[${i}] holds ${o.lovelace} lovelace, below the ledger minimum of ${min} for that output`);
  });

  // Spell output.
  const datumCbor = (() => {
    const w = new CborWriter();
    writePlutusBytes(w, a.spellData);
    return w.finish();
  })();
  const spellLovelace = spellOutputLovelace(a.changeAddress.length, datumCbor.length, p);
  outputs.push({ address: a.feeAddress, lovelace: spellLovelace, assets: new Map(), datum: { inlineCbor: datumCbor } });

  // Mint map = outputs' assets − inputs' assets.
  const prevOuts = a.prevOutputs;
  if (prevOuts.length !== ins.length) throw new CharmsError('INTERNAL', 'prevOutputs must have one entry per input');
  const inAssets: Assets = new Map();
  prevOuts.forEach((o) => addAll(inAssets, o.assets));
  const mint: Assets = new Map();
  outputs.forEach((o) => addAll(mint, o.assets));
  for (const [pol, m] of inAssets) for (const [n, q] of m) addAsset(mint, pol, n, -q);
  for (const [pol, m] of [...mint]) {
    for (const [n, q] of [...m]) if (q === 0n) m.delete(n);
    if (m.size === 0) mint.delete(pol);
  }
  for (const [pol, m] of mint) {
    if (!policyScripts.has(pol)) {
      const [n, q] = [...m][0]!;
      throw refuse(
        q < 0n
          ? `input native token ${pol}.${n} (${-q}) is kept by no output: put it in an output's content (only Charms tokens can be burned)`
          : `output native token ${pol}.${n} (${q}) is not in the inputs and is no Charms token of this spell, so it cannot be minted`,
      );
    }
    for (const [n, q] of m)
      if (q > (1n << 63n) - 1n || q < -(1n << 63n)) throw refuse(`mint quantity of ${pol}.${n} does not fit in 64 bits`);
  }

  // Sorted inputs, redeemers and scripts.
  const sortedIns = ins.map(inputRef).sort(compareInputRefs);
  const permutation = inputPermutation(ins);
  const versionData = versionRedeemer(spell.version);
  const redeemers: RedeemerSpec[] = [];
  const scripts = new Map<string, Uint8Array>();
  ins.forEach((_, i) => {
    const nonToken = a.inputCharms[i]!.map(([app]) => app).filter((app) => !isTokenApp(app));
    if (nonToken.length === 0) return;
    const script = proxyScriptForApps(nonToken);
    const hash = paymentScriptHash(prevOuts[i]!.address);
    if (hash === undefined || !equalBytes(hash, scriptHash(script))) return;
    scripts.set(toHex(scriptHash(script)), script);
    redeemers.push({ tag: REDEEMER_SPEND, index: permutation[i]!, data: versionData, units: MINT_SPEND_EX_UNITS });
  });
  const mintPolicies = [...mint.keys()].sort(byHexBytes);
  mintPolicies.forEach((pol, idx) => {
    const script = policyScripts.get(pol)!;
    scripts.set(toHex(scriptHash(script)), script);
    redeemers.push({ tag: REDEEMER_MINT, index: idx, data: versionData, units: MINT_SPEND_EX_UNITS });
  });
  const permCbor = (() => {
    const w = new CborWriter();
    w.arrayHeader(permutation.length);
    for (const x of permutation) w.int(x);
    return w.finish();
  })();
  redeemers.push({ tag: REDEEMER_REWARD, index: 0, data: permCbor, units: WITHDRAW_EX_UNITS });
  redeemers.sort((x, y) => x.tag - y.tag || x.index - y.index);
  const redeemersBytes = redeemersCbor(redeemers);
  const sdh = scriptDataHash(redeemersBytes, p);

  const parts: Parts = {
    inputs: sortedIns,
    outputs,
    fee: FEE_PLACEHOLDER,
    withdrawal: scrollsRewardAccount(networkId, a.scrollsWithdrawScriptHash),
    mint,
    scriptDataHash: sdh,
    collateral: inputRef(a.collateral),
    reference: a.referenceInput ? inputRef(a.referenceInput) : { hash: fromHex(V15_REFERENCE_INPUT.hash), index: V15_REFERENCE_INPUT.index },
    networkId,
    scripts: [...scripts.keys()].sort(byHexBytes).map((h) => scripts.get(h)!),
    redeemers: redeemersBytes,
  };
  const fee = heuristicFee(encodeTx(parts).length, p);
  parts.fee = fee;

  const totalIn = prevOuts.reduce((s, o) => s + o.lovelace, 0n);
  const totalOut = outputs.reduce((s, o) => s + o.lovelace, 0n);
  const rest = totalIn - totalOut - fee;
  if (rest < 0n)
    throw refuse(`the inputs hold ${totalIn} lovelace, short of the outputs (${totalOut}) plus the fee (${fee}) by ${-rest}: add an input`);
  let change: bigint | undefined;
  if (rest > 0n) {
    const changeOut: OutputSpec = { address: a.changeAddress, lovelace: rest, assets: new Map() };
    const min = minLovelace(changeOut, p);
    if (rest < min) throw refuse(`the change (${rest} lovelace) is below the ledger minimum of ${min}: add an input or lower an output`);
    outputs.push(changeOut);
    change = rest;
  }
  const tx = encodeTx(parts);

  // A lower bound of the ledger's minimum fee (no reference-script fee; two vkey witnesses): the
  // heuristic prices no ex-units, so with several mint/spend redeemers it falls below it.
  const units = redeemers.reduce((s, r) => ({ mem: s.mem + r.units.mem, steps: s.steps + r.units.steps }), { mem: 0n, steps: 0n });
  const minFee = p.txFeeFixed + p.txFeePerByte * (BigInt(tx.length) + VKEY_WITNESS_BYTES) + exUnitsFee(units.mem, units.steps, p);
  if (fee < minFee)
    throw refuse(
      `the fee heuristic (${fee} lovelace) is below the ledger minimum (at least ${minFee}) for ${redeemers.length - 1} mint/spend script(s): split the spell into transactions with fewer policies`,
    );
  if (tx.length > p.maxTxSize) throw refuse(`the transaction is ${tx.length} bytes, over the ledger maximum of ${p.maxTxSize}`);
  if (units.mem > p.maxTxExecutionUnits.memory || units.steps > p.maxTxExecutionUnits.steps)
    throw refuse('the scripts exceed the ledger maximum execution units per transaction: split the spell');

  const result: CardanoBuildResult = { tx, fee, permutation, scriptDataHash: sdh, spellOutputLovelace: spellLovelace };
  if (change !== undefined) result.change = change;
  return result;
}

/** Raw bytes of the fee address configured for Cardano (`fee_addresses.cardano.mainnet`), or the default. */
export const cardanoFeeAddressBytes = (configured?: string): Uint8Array => cardanoAddressBytes(configured ?? DEFAULT_CARDANO_FEE_ADDRESS);
