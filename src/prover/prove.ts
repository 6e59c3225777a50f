/**
 * The prove pipeline: check the spell (protocol rules and app contracts), prove the committed
 * public values with the configured backend, and build the unsigned transaction carrying
 * `(spell without ins/coins, proof)`.
 */
import { CharmsError } from '../errors.js';
import type { Logger } from '../infra/log.js';
import { CborWriter } from '../codec/cbor.js';
import { fromHex, toHex } from '../util/bytes.js';
import { parseTx, txid as txidOf } from '../bitcoin/tx.js';
import { buildSpellTx, checkFeeRate, checkNotDust } from '../bitcoin/builder.js';
import { preflightProveRequest } from '../bitcoin/preflight.js';
import { addressToScript } from '../bitcoin/address.js';
import { charmsFee, feeScriptFor, type FeeSettings } from '../bitcoin/fee-settings.js';
import { encodeSpellCbor, spellToValue, type NormalizedSpell } from '../model/spell.js';
import { utxoIdToString, txidToDisplay } from '../model/primitives.js';
import type { ChainTx, ProveRequest } from '../model/request.js';
import { publicValuesFor } from '../groth16/public-values.js';
import { checkSpell, type CheckResult } from '../checker/check.js';
import { runApp as defaultRunApp } from '../runner/index.js';
import { refuseWhenStopping, type ProofBackend } from './backend.js';
import { spellPayload } from './payload.js';
import { proveCardanoSpellTx } from './prove-cardano.js';
import type { CardanoProtocolParams } from '../cardano/protocol-params.js';
import type { ScrollsClient } from '../scrolls/client.js';
import { bindBitcoinScrolls } from './scrolls-binding.js';
import type { ProofWorkers } from './proof-workers.js';
import { preverify } from './preverify.js';

export interface ProveDeps {
  backend: ProofBackend;
  feeSettings?: FeeSettings;
  runApp?: typeof defaultRunApp;
  log?: Logger;
  /**
   * The Scrolls canisters (Bitcoin Scrolls outputs' scripts; the Cardano co-signature). A real
   * prover server has one; without it, spells that need the canister are refused.
   */
  scrolls?: ScrollsClient;
  /** Cardano protocol parameters (default: the embedded mainnet ones). */
  cardanoParams?: CardanoProtocolParams;
  /** Proof threads (a server's): prerequisite spells are verified there, off the event loop. */
  proofWorkers?: ProofWorkers;
  /**
   * Aborted when the server stops (SIGTERM): a request that has not reached its proof yet stops
   * there (503) instead of paying for one.
   */
  stopping?: AbortSignal;
  /** Bitcoin fee-rate cap in sat/vB (`SVC_MAX_FEE_RATE`; default Bitcoin Core's maxfeerate, 10 000). */
  maxFeeRate?: number;
}

export interface ProveOutcome {
  txs: ChainTx[];
  check: CheckResult;
}

/** Length of CBOR(spell, 128 × 0xff dummy proof): what the preflight's fee estimate counts. */
function dummyPayloadLength(spell: NormalizedSpell): number {
  const w = new CborWriter();
  w.arrayHeader(2);
  w.value(spellToValue(spell, false));
  w.uintArray(new Uint8Array(128).fill(0xff));
  return w.finish().length;
}

/** Output values of the transactions that created the spell's inputs, from `prev_txs`. */
function prevOutValues(spell: NormalizedSpell, prevTxs: ChainTx[]): bigint[] {
  const byTxid = new Map<string, ReturnType<typeof parseTx>>();
  for (const t of prevTxs) {
    if (t.chain !== 'bitcoin') continue;
    const tx = parseTx(fromHex(t.hex, 'prev_txs'));
    byTxid.set(txidToDisplay(txidOf(tx)), tx);
  }
  return (spell.tx.ins ?? []).map((u) => {
    const tx = byTxid.get(txidToDisplay(u.txid));
    const out = tx?.outputs[u.vout];
    if (!out) throw new CharmsError('INVALID_INPUT', `utxo not found in prev_txs: ${utxoIdToString(u)}`);
    return out.value;
  });
}

/**
 * Refuses a spell whose Scrolls outputs (`tx.scrolls`) still have an empty `dest`: the last guard
 * before building. The reference lets them through preflight and builds a 1000-sat output with an
 * empty script (anyone can spend it); we never build one. On Bitcoin a real prover binds them
 * first (`bindBitcoinScrolls`); mock mode refuses them before getting here.
 */
export function refuseUnboundScrollOutputs(spell: NormalizedSpell): void {
  const coins = spell.tx.coins ?? [];
  const unbound = (spell.tx.scrolls ?? []).filter((i) => coins[i]?.dest.length === 0);
  if (unbound.length > 0)
    throw new CharmsError(
      'UNSUPPORTED',
      `Scrolls output(s) ${unbound.map((i) => `#${i}`).join(', ')} have an empty dest: an empty script would let anyone spend the output; Scrolls outputs get their script from the Scrolls canister on a real prover server (Bitcoin), or need a dest`,
    );
}

export async function proveSpellTx(req: ProveRequest, deps: ProveDeps): Promise<ProveOutcome> {
  const { backend } = deps;
  if (req.chain === 'cardano') {
    refuseUnboundScrollOutputs(req.spell);
    return proveCardanoSpellTx(req, deps);
  }
  if (req.spell.mock && !backend.mock) throw new CharmsError('INVALID_SPELL', `cannot prove a mock==true spell on a mock==false prover`);
  // A server that cannot prove says so before running any app contract.
  const unavailable = await backend.unavailable?.();
  if (unavailable !== undefined) throw new CharmsError('PROVER_UNAVAILABLE', `cannot prove: ${unavailable}`);
  // Bitcoin Scrolls outputs: their scripts from the Scrolls canister (real prover), or a refusal.
  const bound = await bindBitcoinScrolls(req.spell, req.chain, { mock: backend.mock, scrolls: deps.scrolls, ...(deps.log ? { log: deps.log } : {}) });
  refuseUnboundScrollOutputs(bound.spell);
  // The mock prover marks the spell as a mock (its proof commits to the mock spell vk).
  const spell: NormalizedSpell = backend.mock ? { ...bound.spell, mock: true } : bound.spell;
  // Beyond the reference, refused before any contract runs (and so before "spell checked"): a fee
  // rate over the cap, outputs below the dust limit. The reference's own refusals keep its order:
  // the spell's, then the preflight's below.
  checkFeeRate(req.fee_rate, deps.maxFeeRate);
  checkNotDust(
    (spell.tx.coins ?? []).map((c) => ({ amount: c.amount, dest: c.dest })),
    new Set(spell.tx.scrolls ?? []),
  );
  await preverify(req, deps);
  const check = await checkSpell({
    spell,
    prev_txs: req.prev_txs,
    app_private_inputs: req.app_private_inputs,
    tx_ins_beamed_source_utxos: req.tx_ins_beamed_source_utxos,
    binaries: req.binaries,
    app_signatures: req.app_signatures,
    chain: req.chain,
    mock: backend.mock,
    runApp: deps.runApp ?? defaultRunApp,
    ...(bound.signed && deps.scrolls ? { scrollOutputs: bound.signed, scrollsKey: deps.scrolls.keys.bitcoinAddrsPubkey } : {}),
  });
  // the reference proves only a verified spell: Scrolls outputs must be bound by now
  if (!check.scrollsBound) throw new CharmsError('INVALID_SPELL', 'spell verification failed: its Scrolls outputs are not bound to the Scrolls canister');
  const totalCycles = check.cycles.reduce((a, b) => a + b, 0n);
  deps.log?.info(`spell checked: ${check.cycles.length} app run(s), ${totalCycles} cycles`);
  // The reference's request preflight: change-address network, output scripts, funds estimate.
  const values = prevOutValues(spell, req.prev_txs);
  const change = addressToScript(req.change_address);
  let fee: { script: Uint8Array; amount: bigint } | undefined;
  if (deps.feeSettings) {
    const script = feeScriptFor(deps.feeSettings, change.network);
    const amount = charmsFee(deps.feeSettings, totalCycles);
    if (script && amount > 0n) fee = { script, amount };
  }
  const estimateSpell = { ...spell, tx: { ...spell.tx } };
  delete estimateSpell.tx.ins;
  preflightProveRequest({
    changeAddress: req.change_address,
    mock: backend.mock,
    ins: spell.tx.ins ?? [],
    prevOutValues: values,
    coins: (spell.tx.coins ?? []).map((c) => ({ amount: c.amount, dest: c.dest })),
    ...(spell.tx.scrolls ? { scrolls: spell.tx.scrolls } : {}),
    charmsFee: fee?.amount ?? 0n,
    feeRate: req.fee_rate,
    ...(deps.maxFeeRate !== undefined ? { maxFeeRate: deps.maxFeeRate } : {}),
    spellCborLenForEstimate: dummyPayloadLength(estimateSpell),
  });
  refuseWhenStopping(deps.stopping);
  const proof = await backend.prove(publicValuesFor(spell.version, encodeSpellCbor(spell), spell.mock), {
    spell,
    request: req,
    ...(bound.signed ? { scrollOutputs: bound.signed } : {}),
    ...(deps.stopping ? { stopping: deps.stopping } : {}),
  });
  const txBytes = buildSpellTx({
    ins: spell.tx.ins ?? [],
    prevOutValues: values,
    coins: (spell.tx.coins ?? []).map((c) => ({ amount: c.amount, dest: c.dest })),
    spellPayload: spellPayload(spell, proof),
    changeAddress: req.change_address,
    feeRate: req.fee_rate,
    ...(deps.maxFeeRate !== undefined ? { maxFeeRate: deps.maxFeeRate } : {}),
    ...(fee ? { charmsFee: fee } : {}),
  });
  return { txs: [{ chain: 'bitcoin', hex: toHex(txBytes) }], check };
}
