/**
 * A fixed-size pool of worker threads that prepare (validate, instrument, compile) and run app
 * invocations, each with a wall-clock timeout. The pool size is the cap on how many of these run
 * at once; further tasks queue. A worker whose task times out (or that dies, e.g. past its heap
 * limit) is terminated and replaced, so a hostile app can neither hang nor crash the calling
 * process. Idle workers are unref'd: they never keep the process alive; `close()` terminates them.
 */
import { Worker } from 'node:worker_threads';
import { bundleOf, bundleWorker } from '../util/bundle.js';
import { noBundleOf } from '../settings/env.js';
import type { WorkerReply, WorkerTask } from './worker.js';
import { registerGauge } from '../util/metrics.js';

/** Every pool of the process, for the `charms_worker_tasks` gauge (running and queued tasks per pool). */
const pools = new Set<{ name: string; running(): number; queued(): number }>();
registerGauge(
  'charms_worker_tasks',
  'Tasks in the worker-thread pools (app contract runs, proof threads), running or queued',
  () => {
    const out = new Map<string, { running: number; queued: number }>();
    for (const p of pools) {
      const o = out.get(p.name) ?? { running: 0, queued: 0 };
      o.running += p.running();
      o.queued += p.queued();
      out.set(p.name, o);
    }
    return [...out].flatMap(([pool, o]) => [
      { labels: { pool, state: 'running' }, value: o.running },
      { labels: { pool, state: 'queued' }, value: o.queued },
    ]);
  },
  ['pool', 'state'],
);

export type PoolOutcome<R = WorkerReply> = { ok: true; reply: R } | { ok: false; error: string };

interface Task<T, R> {
  task: T;
  timeoutMs: number;
  what: string;
  resolve: (r: PoolOutcome<R>) => void;
}

interface Slot<T, R> {
  worker: Worker;
  task?: Task<T, R> | undefined;
  taskId?: number;
  timer?: NodeJS.Timeout | undefined;
}

export interface PoolOptions {
  /** How many workers (= tasks running at once). */
  size: number;
  /** JS heap cap of each worker in MB (its wasm memory is capped separately, per module). */
  heapMb: number;
  /** The worker script: it answers each posted task `{...task, id}` with one message `{...reply, id}`. */
  url?: URL;
  /** What a worker is called in failure messages. */
  name?: string;
}

/**
 * The pool of any worker script that answers `{...task, id}` with `{...reply, id}` (the app
 * runner's by default; the prover's proof threads use it too).
 */
export class WorkerPool<T extends object, R extends { id: number }> {
  private readonly slots: Slot<T, R>[] = [];
  private readonly queue: Task<T, R>[] = [];
  private nextId = 1;
  private closed = false;

  private readonly url: URL;
  private readonly name: string;

  constructor(readonly options: PoolOptions) {
    this.url = options.url ?? new URL('./worker.js', import.meta.url);
    this.name = options.name ?? 'app runner worker';
    pools.add({ name: this.name, running: () => this.slots.filter((s) => s.task).length, queued: () => this.queue.length });
  }

  /** Runs `task` on a worker; `what` names it in timeout/crash messages. */
  submit(task: T, timeoutMs: number, what: string): Promise<PoolOutcome<R>> {
    if (this.closed) this.closed = false; // a closed pool restarts on demand
    return new Promise((resolve) => {
      this.queue.push({ task, timeoutMs, what, resolve });
      this.dispatch();
    });
  }

  /** Starts all workers now (each loads its script) instead of on the first tasks. */
  warm(): void {
    this.closed = false;
    while (this.slots.length < this.options.size) this.spawn();
  }

  /** Terminates all workers; queued tasks resolve as failed. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.queue.splice(0)) t.resolve(failed(`${this.name} pool was shut down`));
    const slots = this.slots.splice(0);
    await Promise.all(
      slots.map(async (s) => {
        if (s.timer) clearTimeout(s.timer);
        s.task?.resolve(failed(`${this.name} pool was shut down`));
        s.task = undefined;
        await s.worker.terminate();
      }),
    );
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.task);
      if (!slot) {
        if (this.slots.length >= this.options.size) return;
        slot = this.spawn();
      }
      this.start(slot, this.queue.shift()!);
    }
  }

  private spawn(): Slot<T, R> {
    const resourceLimits = { maxOldGenerationSizeMb: this.options.heapMb };
    const noBundle = noBundleOf(process.env); // read at each spawn, as the CLI's entry reads it
    const bundle = bundleOf(this.url, noBundle); // the worker script's bundle starts faster (util/bundle.ts)
    const worker = bundle ? new Worker(bundleWorker(noBundle), { workerData: { bundle }, resourceLimits }) : new Worker(this.url, { resourceLimits });
    const slot: Slot<T, R> = { worker };
    worker.on('message', (msg: R) => {
      if (slot.task && msg.id === slot.taskId) this.finish(slot, msg);
    });
    worker.on('error', (err) => {
      this.retire(slot, failed(`${this.name} crashed: ${err.message}`));
    });
    worker.on('exit', () => {
      this.retire(slot, failed(`${this.name} exited unexpectedly`));
    });
    worker.unref();
    this.slots.push(slot);
    return slot;
  }

  private start(slot: Slot<T, R>, task: Task<T, R>): void {
    slot.task = task;
    slot.taskId = this.nextId++;
    slot.worker.ref();
    slot.timer = setTimeout(() => {
      this.retire(slot, failed(`${task.what} timed out after ${task.timeoutMs} ms (wall clock)`));
      void slot.worker.terminate();
    }, task.timeoutMs);
    slot.worker.postMessage({ ...task.task, id: slot.taskId });
  }

  private finish(slot: Slot<T, R>, reply: R): void {
    if (slot.timer) clearTimeout(slot.timer);
    const task = slot.task;
    slot.task = undefined;
    slot.timer = undefined;
    slot.worker.unref();
    task?.resolve({ ok: true, reply });
    this.dispatch();
  }

  /** Removes a worker that timed out or died; its pending task resolves with `outcome`. */
  private retire(slot: Slot<T, R>, outcome: PoolOutcome<R>): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.slots.splice(i, 1);
    if (slot.timer) clearTimeout(slot.timer);
    const task = slot.task;
    slot.task = undefined;
    task?.resolve(outcome);
    if (!this.closed) this.dispatch();
  }
}

function failed<R>(error: string): PoolOutcome<R> {
  return { ok: false, error };
}

/** The app runner's pool: prepare and run tasks (worker.ts). */
export class RunnerPool extends WorkerPool<WorkerTask, WorkerReply> {}
