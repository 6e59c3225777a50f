/**
 * Proof backends. The mock backend makes a real Groth16 proof over BLS12-381 for the dummy
 * circuit (the reference's mock prover), committing to the spell's public values. Real SP1
 * proving (CPU, network, GPU) is not available in this build: such a backend says exactly what
 * is missing and never returns a fake proof.
 */
import { CharmsError } from '../errors.js';
import { proveMock } from '../proof/mock.js';
import type { ProverConfig } from '../settings/settings.js';

export interface ProofBackend {
  readonly name: string;
  readonly mock: boolean;
  /** True when the backend can produce proofs now. */
  ready(): Promise<boolean>;
  /** Proves the committed public values; returns the proof bytes that go on chain. */
  prove(publicValues: Uint8Array): Promise<Uint8Array>;
}

export class MockBackend implements ProofBackend {
  readonly name = 'mock';
  readonly mock = true;
  async ready(): Promise<boolean> {
    return true;
  }
  async prove(publicValues: Uint8Array): Promise<Uint8Array> {
    return proveMock(publicValues);
  }
}

/** What a real (SP1) configuration lacks in this build, in words an operator can act on. */
export function missingForRealProving(c: ProverConfig): string {
  if (c.appProver === 'network' || c.spellProver === 'network') {
    if (!c.networkPrivateKey)
      return 'network proving needs NETWORK_PRIVATE_KEY (the proving-network account key); it is not set';
    return 'SP1 network proving is not implemented in this build yet; run with --mock (MOCK=1) or use the hosted prover (SVC_PROVE_API_URL)';
  }
  if (c.gpuServiceUrl) return 'GPU proving via ZK_GPU_SERVICE_URL is not implemented in this build yet; run with --mock (MOCK=1)';
  return 'local CPU SP1 proving (APP_ZK_PROVER=cpu) is not available in TypeScript; set APP_ZK_PROVER=network with NETWORK_PRIVATE_KEY, or run with --mock (MOCK=1)';
}

export class UnavailableBackend implements ProofBackend {
  readonly mock = false;
  readonly name: string;
  constructor(private readonly config: ProverConfig) {
    this.name = `${config.appProver}/${config.spellProver}`;
  }
  async ready(): Promise<boolean> {
    return false;
  }
  async prove(): Promise<Uint8Array> {
    throw new CharmsError('PROVER_UNAVAILABLE', `cannot prove: ${missingForRealProving(this.config)}`);
  }
}

export function backendFor(c: ProverConfig): ProofBackend {
  return c.mock ? new MockBackend() : new UnavailableBackend(c);
}
