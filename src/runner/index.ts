/**
 * The WASM app runner: runs a Charms app contract (a wasm32-wasip1 command module) the way the
 * reference runner (charms-app-runner on wasmi 1.1.0) does, natively in V8, with
 * wasmi-compatible fuel ("cycles") metering, a call-depth limit and a wall-clock timeout.
 *
 * The caller encodes stdin: CBOR of the 4-tuple `[App, Transaction, x, w]` (see the report /
 * docs in shared/protocol/app-runner.md §1.5).
 */
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { CharmsError } from '../errors.js';
import { toHex } from '../util/bytes.js';
import { executeApp, type RunResult } from './execute.js';
import { checkAppModule } from './policy.js';
import { RunnerPool } from './pool.js';
import { prepareModule, type Prepared } from './prepare.js';
import { lineLogger, type Logger } from '../infra/log.js';

export type { RunResult } from './execute.js';

/** The reference's per-run fuel budget (`MAX_FUEL_PER_RUN`). */
const DEFAULT_FUEL_LIMIT = 1_000_000_000n;
/** Wall-clock guard per run; real apps need about a millisecond. */
const DEFAULT_TIMEOUT_MS = 5_000;

/**
 * Resource caps of the runner (docs/server.md "Limits"). The reference (wasmi without a store
 * limiter) has none besides the module's own maxima and 4 GiB; these are stricter on purpose:
 * the process's peak memory is about `concurrency × (memoryPages × 64 KiB + workerHeapMb)`
 * plus the module cache, whatever its clients send.
 */
export interface RunnerLimits {
  /** Linear memory per run, in 64 KiB pages (default 2048 = 128 MiB). */
  memoryPages: number;
  /** Elements per table per run (default 65 536; 8 bytes each). */
  tableElements: number;
  /** Worker threads = app preparations and runs executing at once (default min(2, cores)). */
  concurrency: number;
  /** JS heap cap of each worker, MB (default 512): bounds the instrumenter on huge modules. */
  workerHeapMb: number;
  /** Wall-clock limit for validating + instrumenting + compiling one module (default 60 s). */
  prepareTimeoutMs: number;
  /** On-disk cache of prepared modules (prepared-cache.ts), for one-shot commands; none by default. */
  preparedCacheDir?: string | undefined;
  /**
   * Where runs happen. 'worker' (default, the servers): in the worker threads, with the JS heap
   * cap and the wall-clock guard. 'thread' (the CLI's one-shot commands): modules up to
   * THREAD_MODULE_MAX_BYTES are prepared and run on the calling thread, bounded by fuel, memory
   * pages, table elements and call depth as in the reference (no wall-clock guard), which saves a
   * worker's start (~50 ms of CPU); larger modules still go to a worker.
   */
  isolation: 'worker' | 'thread';
}

/** Modules above this size are prepared in a worker even under 'thread' isolation (heap-capped instrumenter). */
export const THREAD_MODULE_MAX_BYTES = 4 * 1024 * 1024;

export const DEFAULT_RUNNER_LIMITS: Readonly<RunnerLimits> = Object.freeze({
  memoryPages: 2048,
  tableElements: 65_536,
  concurrency: Math.max(1, Math.min(2, availableParallelism())),
  workerHeapMb: 512,
  prepareTimeoutMs: 60_000,
  isolation: 'worker',
});

let limits: RunnerLimits = { ...DEFAULT_RUNNER_LIMITS };
/** Where the runner's warnings go (an unwritable prepared-module cache); plain lines on stderr until configured. */
let log: Logger = lineLogger();

/** The caps in force. */
export const runnerLimits = (): Readonly<RunnerLimits> => limits;

/**
 * Sets the runner's caps (call at start-up, before the first run; running workers are stopped so
 * the new sizes apply). The servers and one-shot commands pass the environment's caps
 * (`runnerSettingsOf`, settings/runner.ts), and their logger for the runner's warnings.
 */
export async function configureRunner(next: Partial<RunnerLimits>, logger?: Logger): Promise<void> {
  const merged = { ...limits, ...next };
  const check = (name: Exclude<keyof RunnerLimits, 'preparedCacheDir' | 'isolation'>, min: number, max: number) => {
    const v = merged[name];
    if (!Number.isSafeInteger(v) || v < min || v > max) throw new CharmsError('CONFIG', `app runner: ${name} must be an integer in ${min}..${max}, got ${v}`);
  };
  check('memoryPages', 1, 65_536);
  check('tableElements', 1, 10_000_000);
  check('concurrency', 1, 256);
  check('workerHeapMb', 16, 65_536);
  check('prepareTimeoutMs', 1, 3_600_000);
  if (merged.isolation !== 'worker' && merged.isolation !== 'thread')
    throw new CharmsError('CONFIG', `app runner: isolation must be 'worker' or 'thread', got ${JSON.stringify(merged.isolation)}`);
  limits = merged;
  if (logger) log = logger;
  cache.clear(); // prepared modules carry the old caps
  await shutdownRunner();
}

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
  /** Prepare and run on the calling thread (no wall-clock guard). Default: as the runner's `isolation` says. */
  inThread?: boolean;
}

/** Throws a CharmsError (`UNSUPPORTED` or `INVALID_INPUT`) if the reference would refuse the module. */
export function validateAppModule(wasm: Uint8Array): void {
  checkAppModule(wasm);
}

const CACHE_LIMIT = 32;
/** Prepared modules by SHA-256 of the original bytes and budget; in-flight preparations shared. */
const cache = new Map<string, Promise<Prepared>>();

function cached(key: string, make: () => Promise<Prepared>): Promise<Prepared> {
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key); // refresh LRU position
    cache.set(key, hit);
    return hit;
  }
  const p = make();
  cache.set(key, p);
  p.catch(() => cache.delete(key)); // refusals are not cached (cheap to repeat, and bounded)
  if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  return p;
}

const cacheKey = (wasm: Uint8Array, fuelLimit: bigint): string => `${toHex(createHash('sha256').update(wasm).digest())}:${fuelLimit}`;

/** Validates, instruments and compiles on the calling thread (cached). */
export function prepareApp(wasm: Uint8Array, fuelLimit: bigint = DEFAULT_FUEL_LIMIT): Promise<Prepared> {
  return cached(cacheKey(wasm, fuelLimit), async () => prepareModule(wasm, fuelLimit, limits, limits.preparedCacheDir, log));
}

/** The same work in a runner worker, so that a huge module never stalls the event loop. */
function prepareInWorker(wasm: Uint8Array, fuelLimit: bigint): Promise<Prepared> {
  return cached(cacheKey(wasm, fuelLimit), async () => {
    const out = await getPool().submit(
      { kind: 'prepare', wasm, fuelLimit, limits: { memoryPages: limits.memoryPages, tableElements: limits.tableElements }, cacheDir: limits.preparedCacheDir },
      limits.prepareTimeoutMs,
      'preparing the app module',
    );
    if (!out.ok) throw new CharmsError('UNSUPPORTED', `wasm module: ${out.error}`);
    const r = out.reply;
    if (r.kind === 'prepared') {
      for (const w of r.warnings) log.warn(w);
      return r.prepared;
    }
    if (r.kind === 'refused') throw new CharmsError(r.code, r.message);
    throw new CharmsError('INTERNAL', 'app runner worker answered a preparation with a run result');
  });
}

const onCallingThread = (wasm: Uint8Array): boolean => limits.isolation === 'thread' && wasm.length <= THREAD_MODULE_MAX_BYTES;

let pool: RunnerPool | undefined;
const getPool = (): RunnerPool => (pool ??= new RunnerPool({ size: limits.concurrency, heapMb: limits.workerHeapMb }));

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
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new CharmsError('INVALID_INPUT', `runApp: timeoutMs must be a positive number, got ${timeoutMs}`);
  if (typeof fuelLimit !== 'bigint' || fuelLimit < 0n || fuelLimit > 2n ** 63n - 1n)
    throw new CharmsError('INVALID_INPUT', `runApp: fuelLimit must be between 0 and 2^63-1, got ${fuelLimit}`);
  const inThread = args.inThread ?? onCallingThread(args.wasm);
  let prepared: Prepared;
  try {
    prepared = await (inThread ? prepareApp(args.wasm, fuelLimit) : prepareInWorker(args.wasm, fuelLimit));
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
  if (inThread) return executeApp(req);
  const out = await getPool().submit({ kind: 'run', ...req }, timeoutMs, 'app');
  if (!out.ok) return { ok: false, cycles: 0n, stderr: '', error: out.error };
  if (out.reply.kind === 'ran') return out.reply.result;
  return { ok: false, cycles: 0n, stderr: '', error: 'app runner worker answered a run with something else' };
}

/**
 * Starts preparing these binaries in the worker threads now (for the default fuel budget), so
 * that the threads start and the modules are ready by the time the contracts run: one-shot
 * commands call it as soon as they have read their inputs. A failure here is reported by the
 * run that needs the module. Modules that will run on the calling thread are left alone.
 */
export function prepareAhead(binaries: readonly Uint8Array[]): void {
  for (const wasm of binaries) if (!onCallingThread(wasm)) prepareInWorker(wasm, DEFAULT_FUEL_LIMIT).catch(() => {});
}

/** Terminates the worker threads (they are unref'd when idle, so this is only needed for a clean stop). */
export async function shutdownRunner(): Promise<void> {
  const p = pool;
  pool = undefined;
  await p?.close();
}
