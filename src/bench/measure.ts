/** Timing helpers shared by the benchmarks. */

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
