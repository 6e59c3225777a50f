/** Builds the prover pieces from configuration (shared by the CLI and the server). */
import { readFileSync } from 'node:fs';
import { CharmsError } from '../errors.js';
import { parseFeeSettings, type FeeSettings } from '../bitcoin/fee-settings.js';
import { backendFor } from './backend.js';
import type { ProverConfig } from './config.js';
import { LocalProveService, RelayProveService, type ProveService } from './service.js';
import { ScrollsClient } from '../scrolls/client.js';

export function loadFeeSettings(c: ProverConfig): FeeSettings | undefined {
  if (!c.feeSettingsPath) return undefined;
  let text: string;
  try {
    text = readFileSync(c.feeSettingsPath, 'utf8');
  } catch (e) {
    throw new CharmsError('CONFIG', `cannot read fee settings ${c.feeSettingsPath}: ${(e as NodeJS.ErrnoException).code ?? e}`, { cause: e });
  }
  return parseFeeSettings(text);
}

/** Local proving; a real (non-mock) prover talks to the Scrolls canisters, a mock one never does. */
export const localProveService = (c: ProverConfig, fee: FeeSettings | undefined, log?: (m: string) => void): ProveService =>
  new LocalProveService({
    backend: backendFor(c),
    ...(fee ? { feeSettings: fee } : {}),
    ...(log ? { log } : {}),
    ...(c.mock ? {} : { scrolls: new ScrollsClient(c.scrolls) }),
  });

/**
 * The server's service: mock → local mock proving; `charms-prover` → local real backend;
 * `charms` without mock → relay to SVC_PROVE_API_URL (the reference's non-prover build does the same).
 */
export function serverProveService(c: ProverConfig, proverBuild: boolean, log?: (m: string) => void): ProveService {
  const fee = loadFeeSettings(c);
  if (c.mock || proverBuild) return localProveService(c, fee, log);
  return new RelayProveService(c.proveApiUrl, log);
}
