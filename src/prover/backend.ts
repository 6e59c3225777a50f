/**
 * Proof backends. The mock backend makes a real Groth16 proof over BLS12-381 for the dummy
 * circuit (the reference's mock prover), committing to the spell's public values. Real SP1
 * proofs come from the Prover Network or a self-hosted sp1-cluster gateway (src/prover/network);
 * a configuration that cannot prove says exactly what is missing and never returns a fake proof.
 */
import type { ProofWorkers } from './proof-workers.js';
import { CharmsError } from '../errors.js';
import type { Logger } from '../infra/log.js';
import { proveMock } from '../groth16/mock.js';
import type { ProverConfig } from '../settings/settings.js';
import type { ProofInput } from './network/backend.js';
import { networkPlan } from './network/plan.js';

export interface ProofBackend {
  readonly name: string;
  readonly mock: boolean;
  /** True when the backend can produce proofs now. */
  ready(): Promise<boolean>;
  /** Why it cannot prove now (checked before any app contract runs), or undefined. */
  unavailable?(): Promise<string | undefined>;
  /**
   * Proves the committed public values; returns the proof bytes that go on chain. Real backends
   * also need the spell and the request (the SP1 spell checker re-runs the whole check).
   */
  prove(publicValues: Uint8Array, input?: ProofInput): Promise<Uint8Array>;
}

/** Before a proof is paid for: a stopping server starts none (its request is answered 503). */
export function refuseWhenStopping(stopping: AbortSignal | undefined): void {
  if (stopping?.aborted) throw new CharmsError('SERVER_BUSY', 'the server is shutting down: retry in a moment (or on another server)');
}

export class MockBackend implements ProofBackend {
  readonly name = 'mock';
  readonly mock = true;
  /** `workers`: make the proofs on these proof threads instead of the event loop. */
  constructor(private readonly workers?: ProofWorkers) {}
  async ready(): Promise<boolean> {
    return true;
  }
  async prove(publicValues: Uint8Array): Promise<Uint8Array> {
    return this.workers ? this.workers.proveMock(publicValues) : proveMock(publicValues);
  }
}

/** What a real (SP1) configuration lacks, in words an operator can act on (undefined: nothing). */
export function missingForRealProving(c: ProverConfig): string | undefined {
  const plan = networkPlan(c);
  return 'unavailable' in plan ? plan.unavailable : undefined;
}

export class UnavailableBackend implements ProofBackend {
  readonly mock = false;
  readonly name: string;
  constructor(
    private readonly reason: string,
    config: ProverConfig,
  ) {
    this.name = `${config.appProver}/${config.spellProver}`;
  }
  async ready(): Promise<boolean> {
    return false;
  }
  async unavailable(): Promise<string> {
    return this.reason;
  }
  async prove(): Promise<Uint8Array> {
    throw new CharmsError('PROVER_UNAVAILABLE', `cannot prove: ${this.reason}`);
  }
}

/** The backend for this configuration; the network client is loaded only when it is used. */
export async function backendFor(c: ProverConfig, log?: Logger, workers?: ProofWorkers): Promise<ProofBackend> {
  if (c.mock) return new MockBackend(workers);
  const plan = networkPlan(c);
  if ('unavailable' in plan) return new UnavailableBackend(plan.unavailable, c);
  const { NetworkBackend } = await import('./network/backend.js');
  return new NetworkBackend(plan, { ...(log ? { log } : {}), client: { artifactHosts: c.artifactHosts } });
}
