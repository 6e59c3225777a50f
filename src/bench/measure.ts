/** Timing helpers shared by the benchmarks. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Runs `f` `warmup` times untimed (JIT), then `n` times; returns each run's milliseconds. */
export function timeRuns(n: number, f: () => void, warmup = 0): number[] {
  for (let i = 0; i < warmup; i++) f();
  const ts: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    f();
    ts.push(performance.now() - t);
  }
  return ts;
}

/** Median milliseconds of `n` timed runs of `f` after `warmup` untimed ones. */
export const timeMedian = (n: number, f: () => void, warmup = 0): number => median(timeRuns(n, f, warmup));

/**
 * Wall milliseconds of `node <args>` as a user's shell sees it: timed by bash's `time` around the
 * exec, so that forking this (large) benchmark process, which costs more than forking a shell, is
 * not counted. Throws with the command's stderr if it fails.
 */
export function nodeWall(args: string[], env: NodeJS.ProcessEnv = {}): number {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wall-'));
  const err = join(dir, 'stderr');
  const r = spawnSync('bash', ['-c', 'TIMEFORMAT=%3R; { time "$@" >/dev/null 2>"$BENCH_STDERR"; } 2>&1', 'bash', process.execPath, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env, BENCH_STDERR: err },
  });
  try {
    if (r.status !== 0) throw new Error(`node ${args.join(' ')} failed: ${readFileSync(err, 'utf8')}`);
    return Number(r.stdout.trim().split('\n').pop()) * 1000;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
