/**
 * The proving server's proof threads: a fixed number of worker threads (`SVC_PROOF_THREADS`)
 * that verify prerequisite spells and make mock proofs, so that the event loop only parses,
 * dispatches and answers (and `GET /ready` stays fast under load). The runner's worker pool runs
 * them: tasks queue when all threads are busy; a thread that dies or overruns is replaced and
 * its task fails with an INTERNAL error; idle threads do not keep the process alive.
 */
import { CharmsError } from '../errors.js';
import type { SpellProofCheck } from '../groth16/verify.js';
import { WorkerPool, type PoolOutcome } from '../runner/pool.js';
import type { ProofReply, ProofTask } from './proof-worker.js';

/** Wall-clock guard per task (a batch of prerequisite checks takes milliseconds). */
const TASK_TIMEOUT_MS = 60_000;

export class ProofWorkers {
  private readonly pool: WorkerPool<Omit<ProofTask, 'id'>, ProofReply>;

  constructor(readonly size: number) {
    if (!(size >= 1)) throw new CharmsError('CONFIG', 'proof workers need at least one thread');
    this.pool = new WorkerPool({ size, heapMb: 512, url: new URL('./proof-worker.js', import.meta.url), name: 'proof thread' });
  }

  /** Per check: undefined when its proof verifies, else the CharmsError verifySpellProofs gives. */
  async verify(checks: SpellProofCheck[]): Promise<(CharmsError | undefined)[]> {
    if (checks.length === 0) return [];
    const r = replyOf(await this.pool.submit({ verify: checks }, TASK_TIMEOUT_MS, 'verifying prerequisite spells'));
    if (!('errors' in r)) throw failed(r);
    return r.errors.map((e) => (e ? new CharmsError(e.code, e.message) : undefined));
  }

  /** A mock proof of these public values. */
  async proveMock(publicValues: Uint8Array): Promise<Uint8Array> {
    const r = replyOf(await this.pool.submit({ prove: publicValues }, TASK_TIMEOUT_MS, 'making a mock proof'));
    if (!('proof' in r)) throw failed(r);
    return r.proof;
  }

  /** The pairing libraries a thread loaded ('mcl-wasm', or which fell back to pure JS). */
  async backend(): Promise<string> {
    const r = replyOf(await this.pool.submit({ backend: true }, TASK_TIMEOUT_MS, 'loading the pairing backends'));
    if (!('backend' in r)) throw failed(r);
    return r.backend;
  }

  /** Starts the threads now (each loads its pairing backends), instead of on the first task. */
  warm(): void {
    this.pool.warm();
  }

  /** Stops the threads; queued and running tasks fail. The next task starts threads again. */
  close(): Promise<void> {
    return this.pool.close();
  }
}

const replyOf = (o: PoolOutcome<ProofReply>): ProofReply => (o.ok ? o.reply : { id: 0, failure: o.error });
const failed = (r: ProofReply): CharmsError => new CharmsError('INTERNAL', `proof thread: ${'failure' in r ? r.failure : 'unexpected answer'}`);
