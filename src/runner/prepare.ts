/**
 * Turns an app binary into something runnable: policy check and engine validation, metering
 * instrumentation with the per-run caps, compilation. CPU-heavy for large modules, so the
 * runner does it in its worker threads (see index.ts); this module has no state (one-shot
 * commands add an on-disk cache of the results, prepared-cache.ts).
 */
import { CharmsError } from '../errors.js';
import { instrumentModule, type MeterExports, type ModuleLimits } from './instrument.js';
import { checkAppModule } from './policy.js';
import { Wasm, type WasmModule } from './wasm-api.js';
import { preparedKey, readPrepared, writePrepared } from './prepared-cache.js';
import type { Logger } from '../infra/log.js';

export interface Prepared {
  module: WasmModule;
  meter: MeterExports;
}

/**
 * Validates, instruments and compiles `wasm`. Throws a CharmsError naming what is wrong. With
 * `cacheDir`, an intact entry of the on-disk cache (prepared-cache.ts) replaces validation and
 * instrumentation, and a fresh preparation is kept there (a cache that cannot be written is
 * warned about on `log`).
 */
export function prepareModule(wasm: Uint8Array, fuelLimit: bigint, limits: ModuleLimits, cacheDir: string | undefined, log: Logger): Prepared {
  const entry = cacheDir === undefined ? undefined : { dir: cacheDir, key: preparedKey(wasm, fuelLimit, limits) };
  const hit = entry && readPrepared(entry.dir, entry.key);
  if (hit) {
    try {
      return { module: new Wasm.Module(hit.bytes), meter: hit.meter };
    } catch {
      // not a module after all: prepared afresh below, and the entry rewritten
    }
  }
  const parsed = checkAppModule(wasm);
  const instrumented = instrumentModule(parsed, fuelLimit, limits);
  try {
    const module = new Wasm.Module(instrumented.bytes);
    if (entry) writePrepared(entry.dir, entry.key, { bytes: instrumented.bytes, meter: instrumented.exports }, log);
    return { module, meter: instrumented.exports };
  } catch (e) {
    // The original is valid (checked above): the metered copy went past an engine limit
    // (function size, globals) — the module is too large to run here, not malformed.
    throw new CharmsError('UNSUPPORTED', `wasm module: too large to run metered: ${(e as Error).message}`, { cause: e });
  }
}
