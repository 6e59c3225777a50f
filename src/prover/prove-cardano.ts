/**
 * The prove pipeline on Cardano: check the spell, prove it, build the Conway transaction
 * (src/cardano/builder.ts) and, with a real proof, have the Scrolls canister add its co-signature.
 *
 * A mock proof is refused by the canister, so a mock Cardano transaction is returned without the
 * Scrolls witness: the log says so, and it is not submittable (the ledger would refuse it for the
 * missing required signer). A real-proof request without a configured Scrolls signer is refused:
 * we never return a transaction that merely looks signed.
 */
import { CharmsError } from '../errors.js';
import type { Logger } from '../infra/log.js';
import { fromHex, toHex } from '../util/bytes.js';
import { cardanoAddressBytes } from '../cardano/address.js';
import { buildCardanoTx, canonicalContent, cardanoFeeAddressBytes, resolvePrevOutputs } from '../cardano/builder.js';
import type { CardanoProtocolParams } from '../cardano/protocol-params.js';
import { encodeSpellCbor, type NormalizedSpell } from '../model/spell.js';
import type { ProveRequest, ChainTx } from '../model/request.js';
import { publicValuesFor } from '../groth16/public-values.js';
import { checkSpell, type CheckResult } from '../checker/check.js';
import { charmsInUtxo, prevSpells } from '../checker/prev-spells.js';
import { runApp as defaultRunApp } from '../runner/index.js';
import type { CardanoScrollsSigner } from '../scrolls/client.js';
import { spellPayload } from './payload.js';
import { preverify } from './preverify.js';
import type { ProofWorkers } from './proof-workers.js';
import { refuseWhenStopping, type ProofBackend } from './backend.js';
import type { FeeSettings } from '../bitcoin/fee-settings.js';

export interface CardanoProveDeps {
  backend: ProofBackend;
  feeSettings?: FeeSettings;
  runApp?: typeof defaultRunApp;
  log?: Logger;
  /** Adds the Scrolls co-signature (required for real proofs). */
  scrolls?: CardanoScrollsSigner;
  cardanoParams?: CardanoProtocolParams;
  /** Proof threads (a server's): prerequisite spells are verified there. */
  proofWorkers?: ProofWorkers;
  /** Aborted when the server stops: no proof is started then. */
  stopping?: AbortSignal;
}

/** What a mock Cardano result lacks, for stderr and the `x-charms-notice` response header. */
export const CARDANO_MOCK_NOTICE =
  'mock proof: the Cardano transaction is built without the Scrolls co-signature (the canister signs real proofs only); it is not submittable';

export async function proveCardanoSpellTx(req: ProveRequest, deps: CardanoProveDeps): Promise<{ txs: ChainTx[]; check: CheckResult }> {
  const { backend } = deps;
  if (!req.collateral_utxo) throw new CharmsError('INVALID_INPUT', 'Collateral UTXO is required for Cardano spells (--collateral-utxo txid:vout)');
  if (req.spell.mock && !backend.mock) throw new CharmsError('INVALID_SPELL', 'cannot prove a mock==true spell on a mock==false prover');
  if (!backend.mock && !deps.scrolls)
    throw new CharmsError('UNSUPPORTED', 'the Scrolls signer is not configured on this prover: a real Cardano spell transaction needs its co-signature');
  // A server that cannot prove says so before running any app contract.
  const unavailable = await backend.unavailable?.();
  if (unavailable !== undefined) throw new CharmsError('PROVER_UNAVAILABLE', `cannot prove: ${unavailable}`);
  const changeAddress = cardanoAddressBytes(req.change_address);
  const feeAddress = cardanoFeeAddressBytes(deps.feeSettings?.cardano.get('mainnet'));
  // The proof commits to `content` as the read side derives it from the built output.
  const coins = (req.spell.tx.coins ?? []).map((c, i) => ({ ...c, content: canonicalContent(c.content, `coins[${i}].content`) }));
  const asked: NormalizedSpell = { ...req.spell, tx: { ...req.spell.tx, coins }, ...(backend.mock ? { mock: true } : {}) };
  await preverify(req, deps);
  const check = await checkSpell({
    spell: asked,
    prev_txs: req.prev_txs,
    app_private_inputs: req.app_private_inputs,
    tx_ins_beamed_source_utxos: req.tx_ins_beamed_source_utxos,
    binaries: req.binaries,
    app_signatures: req.app_signatures,
    chain: 'cardano',
    mock: backend.mock,
    runApp: deps.runApp ?? defaultRunApp,
  });
  const spell = check.spell;
  const ins = spell.tx.ins ?? [];
  deps.log?.info(`spell checked: ${check.cycles.length} app run(s), ${check.cycles.reduce((a, b) => a + b, 0n)} cycles`);

  // Everything the builder needs is resolved (and can fail) before the proof is paid for.
  const cardanoPrev = req.prev_txs.filter((t) => t.chain === 'cardano').map((t) => fromHex(t.hex, 'prev_txs'));
  const prevOutputs = resolvePrevOutputs(ins, cardanoPrev);
  const prev = prevSpells(req.prev_txs, spell, backend.mock);
  const inputCharms = ins.map((u) => {
    const p = prev.get(toHex(u.txid));
    return p ? (charmsInUtxo(p.spell, u.vout) ?? []) : [];
  });
  const build = (spellData: Uint8Array) =>
    buildCardanoTx({
      spell,
      prevOutputs,
      inputCharms,
      changeAddress,
      feeAddress,
      spellData,
      collateral: req.collateral_utxo!,
      ...(deps.cardanoParams ? { params: deps.cardanoParams } : {}),
    });
  // A dry run with a proof-sized placeholder catches short funds etc. without proving.
  build(spellPayload(spell, new Uint8Array(backend.mock ? 192 : 356)));

  refuseWhenStopping(deps.stopping);
  const proof = await backend.prove(publicValuesFor(spell.version, encodeSpellCbor(spell), spell.mock), { spell, request: req, stopping: deps.stopping });
  const built = build(spellPayload(spell, proof));
  deps.log?.info(`Cardano transaction built: fee ${built.fee} lovelace, spell output ${built.spellOutputLovelace} lovelace`);
  if (backend.mock) {
    deps.log?.info(CARDANO_MOCK_NOTICE);
    return { txs: [{ chain: 'cardano', hex: toHex(built.tx) }], check };
  }
  const signed = await deps.scrolls!.signCardanoTx(built.tx);
  return { txs: [{ chain: 'cardano', hex: toHex(signed) }], check };
}
