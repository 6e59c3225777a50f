/**
 * Tests that need something outside the repo (a Redis server, Chromium, cargo, protoc; the
 * vectors when CHARMS_SHARED_DIR points elsewhere) skip with a visible notice when it is absent,
 * unless `CHARMS_REQUIRE_ALL=1` (set by `.ci/run`): then the missing prerequisite fails the
 * test, so CI cannot pass with half the suite skipped.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const requireAll = (): boolean => process.env.CHARMS_REQUIRE_ALL === '1';

/** Skips `t` (or fails it under CHARMS_REQUIRE_ALL=1) because `what` is missing. */
export function skipOrFail(
  t: { skip: (msg?: string) => void; diagnostic?: (msg: string) => void },
  what: string,
  notice: (line: string) => void = (line) => void process.stderr.write(line),
): void {
  if (requireAll()) throw new Error(`CHARMS_REQUIRE_ALL=1 but ${what}`);
  t.diagnostic?.(`NOTICE: ${what}: test skipped`);
  notice(`NOTICE: ${what}: test skipped\n`);
  t.skip(what);
}

let redis: boolean | undefined;
/** Whether `redis-server` can be started from PATH. */
export function hasRedisServer(): boolean {
  redis ??= spawnSync('redis-server', ['--version']).status === 0;
  return redis;
}

/** Chromium for the browser test: CHROMIUM_PATH, else /usr/bin/chromium or chromium-browser. */
export function chromiumPath(): string | undefined {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => !!p);
  return candidates.find((p) => existsSync(p) && spawnSync(p, ['--version']).status === 0);
}
