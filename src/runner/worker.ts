/**
 * Worker-thread entry: prepares modules and runs app invocations posted by the pool (pool.ts),
 * one at a time. A runaway app or a huge module blocks only this thread; the pool terminates it
 * on timeout.
 */
import { parentPort } from 'node:worker_threads';
import { CharmsError, type ErrorCode } from '../errors.js';
import { executeApp, type ExecuteRequest, type RunResult } from './execute.js';
import type { ModuleLimits } from './instrument.js';
import { prepareModule, type Prepared } from './prepare.js';
import type { Logger } from '../infra/log.js';

export type WorkerTask =
  | { kind: 'prepare'; wasm: Uint8Array; fuelLimit: bigint; limits: ModuleLimits; cacheDir?: string | undefined }
  | ({ kind: 'run' } & ExecuteRequest);

export type WorkerReply = { id: number } & (
  | { kind: 'prepared'; prepared: Prepared /** for the caller's logger (the prepared-module cache's) */; warnings: string[] }
  | { kind: 'refused'; code: ErrorCode; message: string }
  | { kind: 'ran'; result: RunResult }
);

type Body<T> = T extends unknown ? Omit<T, 'id'> : never;

function handle(task: WorkerTask): Body<WorkerReply> {
  if (task.kind === 'prepare') {
    const warnings: string[] = [];
    const log: Logger = { error() {}, warn: (m) => void warnings.push(m), info() {}, debug() {}, warnAlways: (m) => void warnings.push(m) }; // no logger import: keeps the worker bundle small
    try {
      return { kind: 'prepared', prepared: prepareModule(task.wasm, task.fuelLimit, task.limits, task.cacheDir, log), warnings };
    } catch (e) {
      if (e instanceof CharmsError) return { kind: 'refused', code: e.code, message: e.message };
      return { kind: 'refused', code: 'INTERNAL', message: `preparing the app failed: ${(e as Error).message}` };
    }
  }
  try {
    return { kind: 'ran', result: executeApp(task) };
  } catch (e) {
    return { kind: 'ran', result: { ok: false, cycles: 0n, stderr: '', error: `runner failure: ${(e as Error).message}` } };
  }
}

parentPort?.on('message', (task: WorkerTask & { id: number }) => {
  parentPort!.postMessage({ ...handle(task), id: task.id });
});
