/**
 * The proving server's proof threads: a fixed number of worker threads (`SVC_PROOF_THREADS`)
 * that verify prerequisite spells and make mock proofs, so that the event loop only parses,
 * dispatches and answers (and `GET /ready` stays fast under load). Tasks queue when all threads
 * are busy; a thread that dies is replaced and its task fails with an INTERNAL error. Idle
 * threads do not keep the process alive.
 */
import { Worker } from 'node:worker_threads';
import { CharmsError } from '../errors.js';
import type { SpellProofCheck } from '../proof/verify.js';
import type { ProofReply, ProofTask } from './proof-worker.js';

type Job = { task: Omit<ProofTask, 'id'>; resolve: (r: ProofReply) => void };
interface Slot {
  worker: Worker;
  job?: Job | undefined;
}

const WORKER_URL = new URL('./proof-worker.js', import.meta.url);

export class ProofWorkers {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;

  constructor(readonly size: number) {
    if (!(size >= 1)) throw new CharmsError('CONFIG', 'proof workers need at least one thread');
  }

  /** Per check: undefined when its proof verifies, else the CharmsError verifySpellProofs gives. */
  async verify(checks: SpellProofCheck[]): Promise<(CharmsError | undefined)[]> {
    if (checks.length === 0) return [];
    const r = await this.run({ verify: checks });
    if (!('errors' in r)) throw failed(r);
    return r.errors.map((e) => (e ? new CharmsError(e.code, e.message) : undefined));
  }

  /** A mock proof of these public values. */
  async proveMock(publicValues: Uint8Array): Promise<Uint8Array> {
    const r = await this.run({ prove: publicValues });
    if (!('proof' in r)) throw failed(r);
    return r.proof;
  }

  /** Starts the threads now (each loads its pairing backends), instead of on the first task. */
  warm(): void {
    while (this.slots.length < this.size) this.spawn();
  }

  /** Stops the threads; queued and running tasks fail. The next task starts threads again. */
  async close(): Promise<void> {
    const down = { id: 0, failure: 'proof threads were shut down' };
    for (const j of this.queue.splice(0)) j.resolve(down);
    await Promise.all(
      this.slots.splice(0).map((s) => {
        s.job?.resolve(down);
        s.job = undefined;
        return s.worker.terminate();
      }),
    );
  }

  private run(task: Omit<ProofTask, 'id'>): Promise<ProofReply> {
    return new Promise((resolve) => {
      this.queue.push({ task, resolve });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.job);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.worker.ref();
      slot.worker.postMessage({ ...job.task, id: this.nextId++ } as ProofTask);
    }
  }

  private spawn(): Slot {
    const slot: Slot = { worker: new Worker(WORKER_URL) };
    slot.worker.on('message', (r: ProofReply) => {
      const job = slot.job;
      slot.job = undefined;
      slot.worker.unref();
      job?.resolve(r);
      this.dispatch();
    });
    const replace = (why: string) => {
      const i = this.slots.indexOf(slot);
      if (i < 0) return;
      this.slots.splice(i, 1);
      slot.job?.resolve({ id: 0, failure: why });
      slot.job = undefined;
      void slot.worker.terminate();
      this.dispatch();
    };
    slot.worker.on('error', (e) => replace(`proof thread failed: ${e.message}`));
    slot.worker.on('exit', (code) => replace(`proof thread exited (code ${code})`));
    slot.worker.unref(); // after the listeners: adding a 'message' listener refs the worker again
    this.slots.push(slot);
    return slot;
  }
}

const failed = (r: ProofReply): CharmsError => new CharmsError('INTERNAL', `proof thread: ${'failure' in r ? r.failure : 'unexpected answer'}`);
