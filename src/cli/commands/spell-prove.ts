import type { Run } from '../define.js';
import type { spellProveOptions } from '../options.js';
import { bytes, json } from '../output.js';
import { configureOneShotRunner } from '../one-shot-runner.js';
import { CharmsError } from '../../errors.js';
import { readSpellInputs } from '../spell-inputs.js';
import { proveRequestToValue, chainTxToValue, type ProveRequest, type ChainTx } from '../../model/request.js';
import { utxoIdFromString } from '../../model/primitives.js';
import { encodeCbor } from '../../codec/cbor.js';
import { ValueMap } from '../../codec/value.js';
import { ENV_NAMES, envValue, loadSettings, truthy } from '../../settings/settings.js';
import { proveServiceFor } from '../../prover/setup.js';
import { lineLogger } from '../../infra/log.js';
import { extractAndVerifySpell } from '../../verify/index.js';
import { tagTx } from '../../chains/tagged.js';
import { prepareAhead, shutdownRunner } from '../../runner/index.js';
import { CARDANO_MOCK_NOTICE } from '../../prover/prove-cardano.js';
import { checkProverAnswer, describeAnswer } from '../../prover/answer-check.js';
import { loadMclMockCurve } from '../../groth16/mock-mcl.js';
import { useMockCurve } from '../../groth16/mock.js';
import { changeAddressNetwork } from '../../bitcoin/preflight.js';
import { decodeAddress } from '../../bitcoin/address.js';

/**
 * Proves a spell. With --mock (or in `charms-prover`) proving is local; otherwise the CBOR
 * ProveRequest goes to SVC_PROVE_API_URL. Output: `[{"bitcoin":"<hex>"}]`, or the Cardano
 * envelope; with --payload the request itself (JSON, or raw CBOR with `-o cbor`).
 */
const run: Run<typeof spellProveOptions> = async ({ opts }, ctx) => {
  // A local mock proof verifies mock prerequisite spells and makes a mock proof: the WASM
  // BLS12-381 backend (compiled off the main thread) starts loading now and is used if it loads.
  const mockCurve = opts.mock && !opts.payload ? loadMclMockCurve({ shareInstance: true }).then(useMockCurve, () => {}) : undefined;
  const feeRate = Number(opts['fee-rate']);
  if (!Number.isFinite(feeRate)) throw new CharmsError('INVALID_INPUT', '--fee-rate: not a number');
  if (feeRate < 1.0) throw new CharmsError('INVALID_INPUT', 'fee rate must be >= 1.0');
  const i = await readSpellInputs(opts, ctx, opts.chain === 'bitcoin' ? opts['change-address'] : undefined);
  const coll = opts['collateral-utxo'];
  const req: ProveRequest = {
    ...i,
    change_address: opts['change-address'],
    fee_rate: feeRate,
    ...(coll ? { collateral_utxo: utxoIdFromString(coll, '--collateral-utxo') } : {}),
  };
  if (i.chain === 'cardano' && !req.collateral_utxo)
    throw new CharmsError('INVALID_INPUT', 'Collateral UTXO is required for Cardano spells: pass --collateral-utxo txid:vout');
  // The change address is checked before any contract runs (a typo costs nothing then); for a
  // payload or a remote service (which may be a mock one, accepting regtest) only its form.
  if (i.chain === 'bitcoin') {
    const local = !opts.payload && (opts.mock || ctx.prover);
    if (local) changeAddressNetwork(req.change_address, opts.mock);
    else decodeAddress(req.change_address);
  }
  if (opts.payload) return opts.output === 'cbor' ? bytes(encodeCbor(proveRequestToValue(req, false))) : json(proveRequestToValue(req, true));
  // MOCK=1 in the environment does not make this a mock proof (as the reference): only --mock does.
  const { prover: config } = loadSettings(ctx.env, { mock: opts.mock, mockFromEnv: false });
  const progress = (s: string) => ctx.stderr(`${s}\n`);
  if (!config.mock && truthy(envValue(ctx.env, ENV_NAMES.mock))) progress('note: MOCK is set but ignored by `spell prove`; pass --mock for a mock proof');
  if (config.mock) progress('mock mode: the proof is a MOCK proof, accepted only in mock mode (not on chain)');
  let txs;
  await configureOneShotRunner(ctx.env);
  // a local prover runs the contracts: their modules are prepared while the prerequisites are checked
  if (config.mock || ctx.prover) prepareAhead(i.binaries.map(([, wasm]) => wasm));
  try {
    await mockCurve;
    txs = await (await proveServiceFor(config, ctx.prover, lineLogger(ctx.stderr))).prove(req);
  } finally {
    await shutdownRunner();
  }
  const remote = !(config.mock || ctx.prover);
  const mockAnswer = txs.some(isMockSpellTx);
  if (!config.mock && mockAnswer) progress('warning: the proving service returned a MOCK proof (it runs in mock mode): not valid on chain');
  // what a remote prover built is checked against the request before the user sees it to sign
  if (remote) progress(describeAnswer(checkProverAnswer(req, txs, { mock: mockAnswer })));
  if (i.chain === 'cardano') {
    // the local prover said so already; a remote mock server's answer is flagged here
    if (remote && mockAnswer) progress(CARDANO_MOCK_NOTICE);
    // the text envelope cardano-cli reads (`transaction sign`/`submit --tx-file`)
    return json(ValueMap.of({ cborHex: txs[0]!.hex, description: 'Ledger Cddl Format', type: 'Witnessed Tx ConwayEra' }));
  }
  return json(txs.map(chainTxToValue));
};

/** Whether a proved transaction carries a mock spell (what a mock-mode server returns). */
function isMockSpellTx(t: ChainTx): boolean {
  try {
    return extractAndVerifySpell(tagTx(t.chain, t.hex), true).mock;
  } catch {
    return false;
  }
}
export default run;
