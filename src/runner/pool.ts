/**
 * A fixed-size pool of worker threads that prepare (validate, instrument, compile) and run app
 * invocations, each with a wall-clock timeout. The pool size is the cap on how many of these run
 * at once; further tasks queue. A worker whose task times out (or that dies, e.g. past its heap
 * limit) is terminated and replaced, so a hostile app can neither hang nor crash the calling
 * process. Idle workers are unref'd: they never keep the process alive; `close()` terminates them.
 */
import { Worker } from 'node:worker_threads';
import type { WorkerReply, WorkerTask } from './worker.js';

export type PoolOutcome = { ok: true; reply: WorkerReply } | { ok: false; error: string };

interface Task {
  task: WorkerTask;
  timeoutMs: number;
  what: string;
  resolve: (r: PoolOutcome) => void;
}

interface Slot {
  worker: Worker;
  task?: Task | undefined;
  taskId?: number;
  timer?: NodeJS.Timeout | undefined;
}

const WORKER_URL = new URL('./worker.js', import.meta.url);

export interface PoolOptions {
  /** How many workers (= tasks running at once). */
  size: number;
  /** JS heap cap of each worker in MB (its wasm memory is capped separately, per module). */
  heapMb: number;
}

export class RunnerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;

  constructor(readonly options: PoolOptions) {}

  /** Runs `task` on a worker; `what` names it in timeout/crash messages. */
  submit(task: WorkerTask, timeoutMs: number, what: string): Promise<PoolOutcome> {
    if (this.closed) this.closed = false; // a closed pool restarts on demand
    return new Promise((resolve) => {
      this.queue.push({ task, timeoutMs, what, resolve });
      this.dispatch();
    });
  }

  /** Terminates all workers; queued tasks resolve as failed. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.queue.splice(0)) t.resolve(failed('runner was shut down'));
    const slots = this.slots.splice(0);
    await Promise.all(
      slots.map(async (s) => {
        if (s.timer) clearTimeout(s.timer);
        s.task?.resolve(failed('runner was shut down'));
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

  private spawn(): Slot {
    const worker = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb } });
    const slot: Slot = { worker };
    worker.on('message', (msg: WorkerReply) => {
      if (slot.task && msg.id === slot.taskId) this.finish(slot, msg);
    });
    worker.on('error', (err) => {
      this.retire(slot, failed(`app runner worker crashed: ${err.message}`));
    });
    worker.on('exit', () => {
      this.retire(slot, failed('app runner worker exited unexpectedly'));
    });
    worker.unref();
    this.slots.push(slot);
    return slot;
  }

  private start(slot: Slot, task: Task): void {
    slot.task = task;
    slot.taskId = this.nextId++;
    slot.worker.ref();
    slot.timer = setTimeout(() => {
      this.retire(slot, failed(`${task.what} timed out after ${task.timeoutMs} ms (wall clock)`));
      void slot.worker.terminate();
    }, task.timeoutMs);
    slot.worker.postMessage({ ...task.task, id: slot.taskId });
  }

  private finish(slot: Slot, reply: WorkerReply): void {
    if (slot.timer) clearTimeout(slot.timer);
    const task = slot.task;
    slot.task = undefined;
    slot.timer = undefined;
    slot.worker.unref();
    task?.resolve({ ok: true, reply });
    this.dispatch();
  }

  /** Removes a worker that timed out or died; its pending task resolves with `outcome`. */
  private retire(slot: Slot, outcome: PoolOutcome): void {
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

function failed(error: string): PoolOutcome {
  return { ok: false, error };
}
