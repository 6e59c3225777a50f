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
 * Browser-safe: no Node built-ins. The constants are in constants.ts, content parsing in
 * content.ts (beside its inverse), asset maths in multiasset.ts, encoding in tx-encode.ts.
 */
import { CharmsError } from '../errors.js';
import { CborWriter } from '../codec/cbor.js';
import { concatBytes, fromHex, toHex, utf8, equalBytes } from '../util/bytes.js';
import { utxoIdToString, type App, type Data, type UtxoId } from '../model/primitives.js';
import type { NormalizedSpell } from '../model/spell.js';
import { expectedTokens, isTokenApp, policyIdForApp, CIP67_NFT_LABEL } from './assets.js';
import { appliedProxyScript, scriptHash } from './script-template.js';
import { proxyScriptForApps } from './scripts.js';
import { parseCardanoTx, cardanoTxid, parseOutputs, type Assets, type CardanoOutput } from './tx.js';
import { writePlutusBytes } from './plutus-encode.js';
import { MAINNET_PROTOCOL_PARAMS, type CardanoProtocolParams } from './protocol-params.js';
import { cardanoAddressBytes, validateShelleyAddress } from './address.js';
import { parseContent } from './content.js';
import { addAll, byHexBytes, netAssets } from './multiasset.js';
import { refuse } from './build-error.js';
import {
  compareInputRefs,
  encodeTx,
  inputRef,
  minLovelace,
  redeemersCbor,
  scriptDataHash,
  type OutputSpec,
  type RedeemerSpec,
  type TxParts,
} from './tx-encode.js';
import {
  CHANGE_OUTPUT_OVERHEAD,
  DEFAULT_CARDANO_FEE_ADDRESS,
  FEE_PLACEHOLDER,
  MINT_SPEND_EX_UNITS,
  REDEEMER_MINT,
  REDEEMER_REWARD,
  REDEEMER_SPEND,
  REF_SCRIPT_FEE_ESTIMATE,
  SCROLLS_WITHDRAW_SCRIPT_HASH_HEX,
  SIGNATURE_OVERHEAD,
  U64_MAX,
  V15_REFERENCE_INPUT,
  VKEY_WITNESS_BYTES,
  WITHDRAW_EX_UNITS,
} from './constants.js';

// The builder's names, where its callers have always found them (the constants, content parsing
// and encoding live in constants.ts, content.ts and tx-encode.ts).
export { DEFAULT_CARDANO_FEE_ADDRESS, SCROLLS_VKEY_HASH_HEX, V15_REFERENCE_INPUT } from './constants.js';
export { canonicalContent, parseContent } from './content.js';
export { plutusV3LanguageView, scriptDataHash } from './tx-encode.js';

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

/**
 * Builds the transaction in phases: the spell's shape, the policies the builder can attach,
 * the coin outputs, the spell output, the mint map, redeemers and scripts, the fee, the change,
 * then the ledger's limits.
 */
export function buildCardanoTx(a: CardanoBuildArgs): CardanoBuildResult {
  const p = a.params ?? MAINNET_PROTOCOL_PARAMS;
  const spell = a.spell;
  const { ins, coins } = checkShape(a);
  const apps = spell.app_public_inputs.map(([app]) => app);
  const networkId = (a.changeAddress[0]! & 0x0f) === 1 ? 1 : 0;
  // One network per transaction: the spell output pays the fee address and the protocol-version
  // reference input exists on one network only (the defaults are mainnet's; Cardano spells are
  // mainnet-only in the reference, whose Scrolls canister checks the mainnet fee address).
  if ((a.feeAddress[0]! & 0x0f) !== networkId) throw refuse('the change address and the fee address (the spell output) are on different networks');
  if (networkId !== 1 && !a.referenceInput)
    throw refuse(
      'the change address is a testnet address: Cardano spells are mainnet-only (the protocol-version reference input and the Scrolls canister exist on mainnet)',
    );
  const policyScripts = attachablePolicies(apps, a.inputCharms);
  const outputs = coinOutputs(spell, coins, apps, networkId, p);
  const spellLovelace = addSpellOutput(outputs, a, p);
  const prevOuts = a.prevOutputs;
  const mint = mintMap(outputs, prevOuts, ins.length, policyScripts);
  const permutation = inputPermutation(ins);
  const { redeemers, scripts } = redeemersAndScripts(a, ins, prevOuts, mint, policyScripts, permutation);
  const redeemersBytes = redeemersCbor(redeemers);
  const sdh = scriptDataHash(redeemersBytes, p);

  const parts: TxParts = {
    inputs: ins.map(inputRef).sort(compareInputRefs),
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
  const change = addChange(outputs, prevOuts, fee, a.changeAddress, p);
  const tx = encodeTx(parts);
  checkLedgerLimits(tx, fee, redeemers, p);

  const result: CardanoBuildResult = { tx, fee, permutation, scriptDataHash: sdh, spellOutputLovelace: spellLovelace };
  if (change !== undefined) result.change = change;
  return result;
}

/** The spell's inputs and coins, checked against its outs and the input charms. */
function checkShape(a: CardanoBuildArgs) {
  const spell = a.spell;
  const ins = spell.tx.ins ?? [];
  const coins = spell.tx.coins ?? [];
  if (ins.length === 0) throw refuse('the spell has no inputs (a Cardano transaction needs at least one)');
  if (coins.length !== spell.tx.outs.length) throw refuse(`coins (${coins.length}) must match outs (${spell.tx.outs.length})`);
  if (a.inputCharms.length !== ins.length) throw new CharmsError('INTERNAL', 'inputCharms must have one entry per input');
  return { ins, coins };
}

/** Scripts the builder can attach: policies of the token apps in the spell and in the inputs. */
function attachablePolicies(apps: App[], inputCharms: [App, Data][][]): Map<string, Uint8Array> {
  const policyScripts = new Map<string, Uint8Array>();
  const addPolicy = (app: App) => {
    if (isTokenApp(app)) policyScripts.set(toHex(policyIdForApp(app)), appliedProxyScript(app.vk));
  };
  apps.forEach(addPolicy);
  inputCharms.forEach((cs) => cs.forEach(([app]) => addPolicy(app)));
  return policyScripts;
}

/** Outputs: content + CNTs of the charms (none if beamed out), each checked. */
function coinOutputs(
  spell: NormalizedSpell,
  coins: NonNullable<NormalizedSpell['tx']['coins']>,
  apps: App[],
  networkId: number,
  p: CardanoProtocolParams,
): OutputSpec[] {
  const outputs: OutputSpec[] = coins.map((c, i) => {
    const parts = parseContent(c.content, `coins[${i}].content`);
    const beamed = spell.tx.beamed_outs?.has(i) ?? false;
    const charms = beamed
      ? []
      : [...spell.tx.outs[i]!.entries()].map(([k, d]): [App, Data] => {
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
    if (o.lovelace > U64_MAX) throw refuse(`coins[${i}] holds ${o.lovelace} lovelace, more than 64 bits can carry`);
  });
  return outputs;
}

/** Appends the spell output (inline datum, paid to the fee address); returns its lovelace. */
function addSpellOutput(outputs: OutputSpec[], a: CardanoBuildArgs, p: CardanoProtocolParams): bigint {
  const datumCbor = (() => {
    const w = new CborWriter();
    writePlutusBytes(w, a.spellData);
    return w.finish();
  })();
  const spellLovelace = spellOutputLovelace(a.changeAddress.length, datumCbor.length, p);
  outputs.push({ address: a.feeAddress, lovelace: spellLovelace, assets: new Map(), datum: { inlineCbor: datumCbor } });
  return spellLovelace;
}

/** Mint map = outputs' assets − inputs' assets, every policy one the builder can attach. */
function mintMap(outputs: OutputSpec[], prevOuts: CardanoOutput[], nIns: number, policyScripts: Map<string, Uint8Array>): Assets {
  if (prevOuts.length !== nIns) throw new CharmsError('INTERNAL', 'prevOutputs must have one entry per input');
  const mint = netAssets(
    outputs.map((o) => o.assets),
    prevOuts.map((o) => o.assets),
  );
  for (const [pol, m] of mint) {
    if (!policyScripts.has(pol)) {
      const [n, q] = [...m][0]!;
      throw refuse(
        q < 0n
          ? `input native token ${pol}.${n} (${-q}) is kept by no output: put it in an output's content (only Charms tokens can be burned)`
          : `output native token ${pol}.${n} (${q}) is not in the inputs and is no Charms token of this spell, so it cannot be minted`,
      );
    }
    for (const [n, q] of m) if (q > (1n << 63n) - 1n || q < -(1n << 63n)) throw refuse(`mint quantity of ${pol}.${n} does not fit in 64 bits`);
  }
  return mint;
}

/** Spend redeemers for proxy-script inputs, Mint redeemers per policy, the Reward redeemer; the scripts they need. */
function redeemersAndScripts(
  a: CardanoBuildArgs,
  ins: UtxoId[],
  prevOuts: CardanoOutput[],
  mint: Assets,
  policyScripts: Map<string, Uint8Array>,
  permutation: number[],
): { redeemers: RedeemerSpec[]; scripts: Map<string, Uint8Array> } {
  const versionData = versionRedeemer(a.spell.version);
  const redeemers: RedeemerSpec[] = [];
  const scripts = new Map<string, Uint8Array>();
  ins.forEach((_u, i) => {
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
  return { redeemers, scripts };
}

/** Appends the ADA-only change output, if any lovelace is left; returns it. */
function addChange(outputs: OutputSpec[], prevOuts: CardanoOutput[], fee: bigint, changeAddress: Uint8Array, p: CardanoProtocolParams): bigint | undefined {
  const totalIn = prevOuts.reduce((s, o) => s + o.lovelace, 0n);
  const totalOut = outputs.reduce((s, o) => s + o.lovelace, 0n);
  const rest = totalIn - totalOut - fee;
  if (rest < 0n) throw refuse(`the inputs hold ${totalIn} lovelace, short of the outputs (${totalOut}) plus the fee (${fee}) by ${-rest}: add an input`);
  // the ledger's Coin is a u64: a larger change would be written as a CBOR bignum no node accepts
  if (rest > U64_MAX) throw refuse(`the change (${rest} lovelace) does not fit in 64 bits: the inputs hold more than a transaction can carry`);
  let change: bigint | undefined;
  if (rest > 0n) {
    const changeOut: OutputSpec = { address: changeAddress, lovelace: rest, assets: new Map() };
    const min = minLovelace(changeOut, p);
    if (rest < min) throw refuse(`the change (${rest} lovelace) is below the ledger minimum of ${min}: add an input or lower an output`);
    outputs.push(changeOut);
    change = rest;
  }
  return change;
}

/** The ledger's limits: minimum fee, transaction size, execution units. */
function checkLedgerLimits(tx: Uint8Array, fee: bigint, redeemers: RedeemerSpec[], p: CardanoProtocolParams): void {
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
}

/** Raw bytes of the fee address configured for Cardano (`fee_addresses.cardano.mainnet`), or the default. */
export const cardanoFeeAddressBytes = (configured?: string): Uint8Array => cardanoAddressBytes(configured ?? DEFAULT_CARDANO_FEE_ADDRESS);
