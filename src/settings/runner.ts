/**
 * The app runner's caps from the environment (docs/server.md "Limits"): `APP_MEMORY_LIMIT_MB`
 * (per-run linear memory, MiB), `APP_RUN_CONCURRENCY` (app preparations/runs at once) and
 * `APP_RUN_ISOLATION` (worker | thread). The caller hands them to the runner (`configureRunner`).
 */
import { CharmsError } from '../errors.js';
import { ENV_NAMES, envValue, type Env } from './env.js';

/** The runner caps the environment sets; unset names are left out. */
export interface RunnerSettings {
  /** Linear memory per run, in 64 KiB pages. */
  memoryPages?: number;
  concurrency?: number;
  isolation?: 'worker' | 'thread';
}

export function runnerSettingsOf(env: Env): RunnerSettings {
  const out: RunnerSettings = {};
  const int = (names: readonly [string]): number | undefined => {
    const raw = envValue(env, names);
    if (raw === undefined) return undefined;
    const v = Number(raw);
    if (!Number.isSafeInteger(v) || v <= 0) throw new CharmsError('CONFIG', `${names[0]}: expected a positive integer, got ${JSON.stringify(raw)}`);
    return v;
  };
  const mb = int(ENV_NAMES.appMemoryLimitMb);
  if (mb !== undefined) {
    if (mb > 4096) throw new CharmsError('CONFIG', `APP_MEMORY_LIMIT_MB: at most 4096 (wasm32's 4 GiB), got ${mb}`);
    out.memoryPages = mb * 16;
  }
  const c = int(ENV_NAMES.appRunConcurrency);
  if (c !== undefined) out.concurrency = c;
  const iso = envValue(env, ENV_NAMES.appRunIsolation);
  if (iso !== undefined) {
    if (iso !== 'worker' && iso !== 'thread') throw new CharmsError('CONFIG', `APP_RUN_ISOLATION: expected worker or thread, got ${JSON.stringify(iso)}`);
    out.isolation = iso;
  }
  return out;
}
