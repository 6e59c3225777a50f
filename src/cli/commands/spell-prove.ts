import type { CommandDef } from '../define.js';
import { CharmsError } from '../../errors.js';
import { optFlag, optString } from '../io.js';
import { readSpellInputs } from '../spell-inputs.js';
import { proveRequestToValue, type ProveRequest } from '../../model/request.js';
import { utxoIdFromString } from '../../model/primitives.js';
import { encodeCbor } from '../../codec/cbor.js';
import { toJsonCompact } from '../../codec/json.js';
import { proverConfig } from '../../prover/config.js';
import { proveRemote } from '../../prover/client.js';
import { loadFeeSettings, localProveService } from '../../prover/setup.js';
import { chainTxToValue } from '../../model/request.js';
import { configureRunner, runnerLimitsFromEnv, shutdownRunner } from '../../runner/index.js';

/**
 * Proves a spell. With --mock (or in `charms-prover`) proving is local; otherwise the CBOR
 * ProveRequest goes to SVC_PROVE_API_URL. Output: `[{"bitcoin":"<hex>"}]`, or the Cardano
 * envelope; with --payload the request itself (JSON, or raw CBOR with `-o cbor`).
 */
const run: NonNullable<CommandDef['run']> = async (a, ctx) => {
  const feeRate = Number(optString(a, 'fee-rate') ?? '2.0');
  if (!Number.isFinite(feeRate)) throw new CharmsError('INVALID_INPUT', '--fee-rate: not a number');
  if (feeRate < 1.0) throw new CharmsError('INVALID_INPUT', 'fee rate must be >= 1.0');
  const i = await readSpellInputs(a, ctx);
  const coll = optString(a, 'collateral-utxo');
  const req: ProveRequest = {
    spell: i.spell,
    app_private_inputs: i.privateInputs,
    tx_ins_beamed_source_utxos: i.beamedFrom,
    binaries: i.binaries,
    app_signatures: i.appSignatures,
    prev_txs: i.prevTxs,
    change_address: optString(a, 'change-address')!,
    fee_rate: feeRate,
    chain: i.chain,
    ...(coll ? { collateral_utxo: utxoIdFromString(coll, '--collateral-utxo') } : {}),
  };
  if (i.chain === 'cardano' && !req.collateral_utxo) throw new CharmsError('INVALID_INPUT', 'Collateral UTXO is required for Cardano spells');
  if (optFlag(a, 'payload')) {
    if (optString(a, 'output') === 'cbor') ctx.stdout(encodeCbor(proveRequestToValue(req, false)));
    else ctx.stdout(toJsonCompact(proveRequestToValue(req, true)) + '\n');
    return;
  }
  const config = proverConfig(ctx.env, { mock: optFlag(a, 'mock') });
  const progress = (s: string) => ctx.stderr(`${s}\n`);
  let txs;
  if (config.mock || ctx.prover) {
    await configureRunner(runnerLimitsFromEnv(ctx.env));
    try {
      txs = await localProveService(config, loadFeeSettings(config), progress).prove(req);
    } finally {
      await shutdownRunner();
    }
  } else txs = await proveRemote(req, { url: config.proveApiUrl, progress });
  if (i.chain === 'cardano') {
    ctx.stdout(`{"cborHex":"${txs[0]!.hex}","description":"Ledger Cddl Format","type":"Witnessed Tx ConwayEra"}\n`);
    return;
  }
  ctx.stdout(toJsonCompact(txs.map(chainTxToValue)) + '\n');
};
export default run;
