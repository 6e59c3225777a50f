/**
 * Turns an app binary into something runnable: policy check and engine validation, metering
 * instrumentation with the per-run caps, compilation. CPU-heavy for large modules, so the
 * runner does it in its worker threads (see index.ts); this module has no state.
 */
import { CharmsError } from '../errors.js';
import { instrumentModule, type MeterExports, type ModuleLimits } from './instrument.js';
import { checkAppModule } from './policy.js';
import { Wasm, type WasmModule } from './wasm-api.js';

export interface Prepared {
  module: WasmModule;
  meter: MeterExports;
}

/** Validates, instruments and compiles `wasm`. Throws a CharmsError naming what is wrong. */
export function prepareModule(wasm: Uint8Array, fuelLimit: bigint, limits: ModuleLimits): Prepared {
  const parsed = checkAppModule(wasm);
  const instrumented = instrumentModule(parsed, fuelLimit, limits);
  try {
    return { module: new Wasm.Module(instrumented.bytes), meter: instrumented.exports };
  } catch (e) {
    // The original is valid (checked above): the metered copy went past an engine limit
    // (function size, globals) — the module is too large to run here, not malformed.
    throw new CharmsError('UNSUPPORTED', `wasm module: too large to run metered: ${(e as Error).message}`, { cause: e });
  }
}
