/**
 * Worker-thread entry: runs app invocations posted by the pool (see pool.ts) one at a time.
 * A runaway app blocks only this thread; the pool terminates it on timeout.
 */
import { parentPort } from 'node:worker_threads';
import { executeApp, type ExecuteRequest, type RunResult } from './execute.js';

export interface WorkerRequest extends ExecuteRequest {
  id: number;
}

export interface WorkerResponse {
  id: number;
  result: RunResult;
}

parentPort?.on('message', (req: WorkerRequest) => {
  let result: RunResult;
  try {
    result = executeApp(req);
  } catch (e) {
    result = { ok: false, cycles: 0n, stderr: '', error: `runner failure: ${(e as Error).message}` };
  }
  const response: WorkerResponse = { id: req.id, result };
  parentPort!.postMessage(response);
});
