/**
 * The WASM app runner: runs a Charms app contract (a wasm32-wasip1 command module) the way the
 * reference runner (charms-app-runner on wasmi 1.1.0) does, natively in V8, with
 * wasmi-compatible fuel ("cycles") metering, a call-depth limit and a wall-clock timeout.
 *
 * The caller encodes stdin: CBOR of the 4-tuple `[App, Transaction, x, w]` (see the report /
 * docs in shared/protocol/app-runner.md §1.5).
 */
import { createHash } from 'node:crypto';
import { CharmsError } from '../errors.js';
import { toHex } from '../util/bytes.js';
import { executeApp, type RunResult } from './execute.js';
import { instrumentModule, type MeterExports } from './instrument.js';
import { checkAppModule } from './policy.js';
import { RunnerPool } from './pool.js';
import { Wasm, type WasmModule } from './wasm-api.js';

export type { RunResult } from './execute.js';

/** The reference's per-run fuel budget (`MAX_FUEL_PER_RUN`). */
export const DEFAULT_FUEL_LIMIT = 1_000_000_000n;
/** Wall-clock guard per run; real apps need about a millisecond. */
export const DEFAULT_TIMEOUT_MS = 5_000;

export interface RunAppArgs {
  /** The app binary exactly as published (its SHA-256 is the app's vk / wasm hash). */
  wasm: Uint8Array;
  /** CBOR of `[App, Transaction, x, w]`. */
  stdin: Uint8Array;
  /** Fuel budget; default 1e9 like the reference. */
  fuelLimit?: bigint;
  /** Wall-clock limit in ms; default 5000. */
  timeoutMs?: number;
  /** Versioned apps: `__app_version()` must return this before `_start` runs. */
  expectedVersion?: number;
  /** Run on the calling thread (faster, but no timeout isolation). Default false. */
  inThread?: boolean;
}

/** Throws a CharmsError (`UNSUPPORTED` or `INVALID_INPUT`) if the reference would refuse the module. */
export function validateAppModule(wasm: Uint8Array): void {
  checkAppModule(wasm);
}

interface Prepared {
  module: WasmModule;
  meter: MeterExports;
}

const CACHE_LIMIT = 32;
const cache = new Map<string, Prepared>();

/** Validates, instruments and compiles; cached by SHA-256 of the original bytes and budget. */
export function prepareApp(wasm: Uint8Array, fuelLimit: bigint = DEFAULT_FUEL_LIMIT): Prepared {
  const key = `${toHex(createHash('sha256').update(wasm).digest())}:${fuelLimit}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key); // refresh LRU position
    cache.set(key, hit);
    return hit;
  }
  const parsed = checkAppModule(wasm);
  const instrumented = instrumentModule(parsed, fuelLimit);
  let module: WasmModule;
  try {
    module = new Wasm.Module(instrumented.bytes);
  } catch (e) {
    throw new CharmsError('INVALID_INPUT', `wasm module: rejected by the engine: ${(e as Error).message}`, { cause: e });
  }
  const prepared = { module, meter: instrumented.exports };
  cache.set(key, prepared);
  if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  return prepared;
}

let pool: RunnerPool | undefined;

/**
 * Runs the app once. Resolves (never rejects for app problems): `ok` is the reference's
 * "app contract satisfied"; a refused module, trap, out-of-fuel, deep recursion or timeout give
 * `ok: false` with `error`.
 */
export async function runApp(args: RunAppArgs): Promise<RunResult> {
  if (!(args.wasm instanceof Uint8Array)) throw new CharmsError('INVALID_INPUT', 'runApp: wasm must be a Uint8Array');
  if (!(args.stdin instanceof Uint8Array)) throw new CharmsError('INVALID_INPUT', 'runApp: stdin must be a Uint8Array');
  const fuelLimit = args.fuelLimit ?? DEFAULT_FUEL_LIMIT;
  const timeoutMs = args.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new CharmsError('INVALID_INPUT', `runApp: timeoutMs must be a positive number, got ${timeoutMs}`);
  let prepared: Prepared;
  try {
    prepared = prepareApp(args.wasm, fuelLimit);
  } catch (e) {
    if (e instanceof CharmsError) return { ok: false, cycles: 0n, stderr: '', error: e.message };
    throw e;
  }
  const req = {
    module: prepared.module,
    meter: prepared.meter,
    stdin: args.stdin,
    fuelLimit,
    ...(args.expectedVersion === undefined ? {} : { expectedVersion: args.expectedVersion }),
  };
  if (args.inThread) return executeApp(req);
  pool ??= new RunnerPool();
  return pool.run(req, timeoutMs);
}

/** Terminates the worker threads (they are unref'd when idle, so this is only needed for a clean stop). */
export async function shutdownRunner(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.close();
}
