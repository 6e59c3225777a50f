/**
 * A small pool of worker threads that run app invocations with a wall-clock timeout. A worker
 * whose run times out (or that dies) is terminated and replaced, so a hostile app can neither
 * hang nor crash the calling process. Idle workers are unref'd: they never keep the process
 * alive; `close()` terminates them all.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ExecuteRequest, RunResult } from './execute.js';
import type { WorkerRequest, WorkerResponse } from './worker.js';

interface Task {
  req: ExecuteRequest;
  timeoutMs: number;
  resolve: (r: RunResult) => void;
}

interface Slot {
  worker: Worker;
  task?: Task | undefined;
  taskId?: number;
  timer?: NodeJS.Timeout | undefined;
}

const WORKER_URL = new URL('./worker.js', import.meta.url);

export class RunnerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;

  constructor(readonly size = Math.max(1, Math.min(2, availableParallelism()))) {}

  run(req: ExecuteRequest, timeoutMs: number): Promise<RunResult> {
    if (this.closed) this.closed = false; // a closed pool restarts on demand
    return new Promise((resolve) => {
      this.queue.push({ req, timeoutMs, resolve });
      this.dispatch();
    });
  }

  /** Terminates all workers; queued runs resolve as failed. */
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
        if (this.slots.length >= this.size) return;
        slot = this.spawn();
      }
      this.start(slot, this.queue.shift()!);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_URL);
    const slot: Slot = { worker };
    worker.on('message', (msg: WorkerResponse) => {
      if (slot.task && msg.id === slot.taskId) this.finish(slot, msg.result);
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
      const res = failed(`app timed out after ${task.timeoutMs} ms (wall clock)`);
      this.retire(slot, res);
      void slot.worker.terminate();
    }, task.timeoutMs);
    const msg: WorkerRequest = { ...task.req, id: slot.taskId };
    slot.worker.postMessage(msg);
  }

  private finish(slot: Slot, result: RunResult): void {
    if (slot.timer) clearTimeout(slot.timer);
    const task = slot.task;
    slot.task = undefined;
    slot.timer = undefined;
    slot.worker.unref();
    task?.resolve(result);
    this.dispatch();
  }

  /** Removes a worker that timed out or died; its pending task resolves with `result`. */
  private retire(slot: Slot, result: RunResult): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return;
    this.slots.splice(i, 1);
    if (slot.timer) clearTimeout(slot.timer);
    const task = slot.task;
    slot.task = undefined;
    task?.resolve(result);
    if (!this.closed) this.dispatch();
  }
}

function failed(error: string): RunResult {
  return { ok: false, cycles: 0n, stderr: '', error };
}
