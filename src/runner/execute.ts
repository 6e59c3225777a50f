/**
 * Runs one app invocation on an already compiled, instrumented module in the current thread:
 * instantiate with the WASI shim, run the (re-exported) start function, check `__app_version`
 * when asked, call `_start`. Success means `_start` returned without trapping.
 */
import { MAX_CALL_DEPTH, TRAP_CALL_DEPTH, TRAP_OUT_OF_FUEL, type MeterExports } from './instrument.js';
import { createWasiShim, HostPanic } from './wasi-shim.js';
import { Wasm, type WasmGlobal, type WasmInstance, type WasmModule } from './wasm-api.js';

export interface RunResult {
  /** The app accepted: `_start` returned without trapping (and the version matched, if checked). */
  ok: boolean;
  /** Fuel consumed (wasmi-compatible cycles), also reported for failed runs. */
  cycles: bigint;
  /** What the app (and the host, like the reference) wrote to stderr. */
  stderr: string;
  /** Argument of the last `proc_exit` call, if the app called it (the reference ignores it). */
  exitCode?: number;
  /** Why the run failed. */
  error?: string;
}

export interface ExecuteRequest {
  module: WasmModule;
  meter: MeterExports;
  stdin: Uint8Array;
  fuelLimit: bigint;
  /** For versioned apps: the version `__app_version()` must return. */
  expectedVersion?: number;
}

function describeFailure(e: unknown, trapReason: number, fuelLimit: bigint): string {
  if (trapReason === TRAP_OUT_OF_FUEL) return `out of fuel: the app needs more than ${fuelLimit} cycles`;
  if (trapReason === TRAP_CALL_DEPTH) return `call stack exhausted: more than ${MAX_CALL_DEPTH} nested calls`;
  // The engine's stack overflow is a RangeError with no code; its text only picks the wording
  // here (the run fails either way).
  if (e instanceof RangeError && /call stack/i.test(e.message)) return 'call stack exhausted: the engine stack overflowed';
  if (e instanceof HostPanic) return `host function failed: ${e.message}`;
  if (e instanceof Wasm.RuntimeError) return `error running wasm: ${e.message}`;
  if (e instanceof Wasm.LinkError) return `cannot instantiate the app: ${e.message}`;
  return `error running wasm: ${e instanceof Error ? e.message : String(e)}`;
}

export function executeApp(req: ExecuteRequest): RunResult {
  const shim = createWasiShim(req.stdin);
  let instance: WasmInstance | undefined;
  const readGlobal = (name: string): WasmGlobal | undefined => {
    const g = instance?.exports[name];
    return g instanceof Wasm.Global ? g : undefined;
  };
  const finish = (ok: boolean, error?: string): RunResult => {
    const fuel = readGlobal(req.meter.fuel);
    const remaining = fuel ? BigInt(fuel.value as bigint) : req.fuelLimit;
    const result: RunResult = { ok, cycles: req.fuelLimit - remaining, stderr: shim.stderr() };
    const code = shim.exitCode();
    if (code !== undefined) result.exitCode = code;
    if (error !== undefined) result.error = error;
    return result;
  };
  const call = (name: string): unknown => {
    const depth = readGlobal(req.meter.depth);
    if (depth) depth.value = 1; // the export's own frame (depth is counted at call sites)
    const f = instance!.exports[name] as (...args: unknown[]) => unknown;
    return f();
  };

  try {
    instance = new Wasm.Instance(req.module, shim.imports);
    shim.bind(instance);
    if (req.meter.start) call(req.meter.start);
    if (req.expectedVersion !== undefined) {
      if (typeof instance.exports['__app_version'] !== 'function') return finish(false, 'versioned app does not export `__app_version`');
      const version = (call('__app_version') as number) >>> 0;
      if (version !== req.expectedVersion)
        return finish(false, `wasm \`__app_version\` (${version}) does not match the spell version (${req.expectedVersion})`);
    }
    call('_start');
    return finish(true);
  } catch (e) {
    const trap = readGlobal(req.meter.trap);
    return finish(false, describeFailure(e, trap ? Number(trap.value) : 0, req.fuelLimit));
  }
}
