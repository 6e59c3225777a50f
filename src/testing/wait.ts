/**
 * Bounded polling for tests: wait on state the test can observe (a counter, a key, a status),
 * never on the clock. Fails with what it waited for when the bound passes.
 */
export async function waitFor<T>(check: () => T | Promise<T>, what: string, o: { timeoutMs?: number; intervalMs?: number } = {}): Promise<T> {
  const timeoutMs = o.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 20));
  }
}
