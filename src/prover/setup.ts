/** Builds the prover pieces from configuration (shared by the CLI and the server). */
import { readFileSync } from 'node:fs';
import { CharmsError } from '../errors.js';
import type { Logger } from '../infra/log.js';
import { parseFeeSettings, type FeeSettings } from '../bitcoin/fee-settings.js';
import { backendFor } from './backend.js';
import type { ProverConfig } from '../settings/settings.js';
import type { ProofWorkers } from './proof-workers.js';
import { LocalProveService, RelayProveService, type ProveService } from './service.js';
import { parseCardanoProtocolParams, type CardanoProtocolParams } from '../cardano/protocol-params.js';

/** A settings file that cannot be read; Node's message names the path already ("ENOENT: …, open '<path>'"): said once. */
function cannotRead(what: string, path: string, e: unknown): CharmsError {
  const why = e instanceof Error ? e.message : String(e);
  return new CharmsError('CONFIG', why.includes(path) ? `cannot read ${what}: ${why}` : `cannot read ${what} ${path}: ${why}`, { cause: e });
}

function loadFeeSettings(c: ProverConfig): FeeSettings | undefined {
  if (!c.feeSettingsPath) return undefined;
  let text: string;
  try {
    text = readFileSync(c.feeSettingsPath, 'utf8');
  } catch (e) {
    throw cannotRead('fee settings', c.feeSettingsPath, e);
  }
  return parseFeeSettings(text);
}

/** The Cardano protocol parameters file, if configured (read and checked at start). */
function loadCardanoParams(c: ProverConfig): CardanoProtocolParams | undefined {
  if (!c.cardanoProtocolParamsPath) return undefined;
  let text: string;
  try {
    text = readFileSync(c.cardanoProtocolParamsPath, 'utf8');
  } catch (e) {
    throw cannotRead('Cardano protocol parameters', c.cardanoProtocolParamsPath, e);
  }
  return parseCardanoProtocolParams(text);
}

/**
 * The one local-or-remote choice, for `charms server` and `charms spell prove` alike: mock → local
 * mock proving; the `charms-prover` build → the local real backend; `charms` without mock → the
 * proving service at SVC_PROVE_API_URL (the reference's non-prover build does the same). The
 * network client and the Scrolls client are loaded only by a configuration that uses them.
 */
export async function proveServiceFor(
  c: ProverConfig,
  proverBuild: boolean,
  log?: Logger,
  proofWorkers?: ProofWorkers,
  stopping?: AbortSignal,
): Promise<ProveService> {
  if (!c.mock && !proverBuild) return new RelayProveService(c.proveApiUrl, log);
  const fee = loadFeeSettings(c);
  // a real (non-mock) prover talks to the Scrolls canisters, a mock one never does
  return new LocalProveService({
    backend: await backendFor(c, log, proofWorkers),
    ...(proofWorkers ? { proofWorkers } : {}),
    ...(fee ? { feeSettings: fee } : {}),
    ...(log ? { log } : {}),
    ...(c.mock ? {} : { scrolls: new (await import('../scrolls/client.js')).ScrollsClient(c.scrolls) }),
    ...(c.cardanoProtocolParamsPath ? { cardanoParams: loadCardanoParams(c)! } : {}),
    ...(c.maxFeeRate !== undefined ? { maxFeeRate: c.maxFeeRate } : {}),
    ...(stopping ? { stopping } : {}),
  });
}
