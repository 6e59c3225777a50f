/**
 * SIGTERM on a real server process (issue 24 item 9): it keeps listening but answers new requests
 * 503, lets requests in progress finish within SVC_DRAIN_TIMEOUT_MS and answers the rest 503,
 * starts no paid proof after the signal, then exits; a second signal exits at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { h1, type Reply } from '../testing/http.js';

interface Child {
  proc: ChildProcess;
  port: number;
  started: () => number;
  exited: Promise<number | null>;
}

async function startChild(env: Record<string, string>): Promise<Child> {
  const script = fileURLToPath(new URL('../testing/drain-child.js', import.meta.url));
  const proc = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn', ...env } });
  let started = 0;
  let out = '';
  const exited = new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
  proc.stderr!.resume();
  const port = await new Promise<number>((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const lines = out.split('\n');
      out = lines.pop()!;
      for (const l of lines) {
        if (/^\d+$/.test(l)) resolve(Number(l));
        else if (l.startsWith('started ')) started++;
      }
    });
    void exited.then((c) => reject(new Error(`child exited ${c} before listening`)));
  });
  return { proc, port, started: () => started, exited };
}

/** Polls `cond` every 20 ms for at most `ms`. */
async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const prove = (port: number, body: object): Promise<Reply> => h1(port, 'POST', '/spells/prove', JSON.stringify(body), { 'content-type': 'application/json' });

test('SIGTERM: new requests 503, in-flight ones finish within the drain time, the rest 503, no paid proof started, exit', async () => {
  const c = await startChild({ SVC_DRAIN_TIMEOUT_MS: '4000' });
  try {
    const short = Array.from({ length: 50 }, (_, i) => prove(c.port, { ms: 1500, id: i }));
    const long = Array.from({ length: 5 }, (_, i) => prove(c.port, { ms: 120_000, id: 100 + i }));
    // waits 1 s, then would start a paid proof: the signal comes in between
    const paid = prove(c.port, { ms: 1000, paid: true, id: 200 });
    await until(() => c.started() === 56, 20_000, 'all requests in progress');
    const t0 = Date.now();
    c.proc.kill('SIGTERM');
    // the port stays open; a new request is answered 503 (once the signal is handled)
    let fresh: Reply | undefined;
    await until(async () => (fresh = await prove(c.port, { ms: 0, id: 300 })).status === 503, 5000, 'a 503 for new requests');
    assert.equal(JSON.parse(fresh!.body.toString()).code, 'SERVER_BUSY');
    assert.equal(fresh!.headers['retry-after'], '1');
    const shortReplies = await Promise.all(short);
    assert.deepEqual(
      shortReplies.map((r) => r.status),
      Array(50).fill(200),
      'every in-flight request finished',
    );
    shortReplies.forEach((r, i) => assert.equal(r.body.toString(), `[{"bitcoin":"done-${i}"}]`));
    const p = await paid;
    assert.equal(p.status, 503, 'no proof paid for after the signal');
    const longReplies = await Promise.all(long);
    assert.deepEqual(
      longReplies.map((r) => r.status),
      Array(5).fill(503),
      'cut at the end of the drain',
    );
    assert.ok(Date.now() - t0 >= 3500, 'the long ones were cut at the drain time, not before');
    const code = await Promise.race([c.exited, new Promise<string>((r) => setTimeout(() => r('still running'), 15_000))]);
    assert.equal(code, 0, 'the process exits, although the long proofs still run');
  } finally {
    c.proc.kill('SIGKILL');
  }
});

test('a second SIGTERM exits at once, without waiting for the drain', async () => {
  const c = await startChild({ SVC_DRAIN_TIMEOUT_MS: '600000' });
  try {
    const long = prove(c.port, { ms: 600_000, id: 1 }).catch((e: Error) => e);
    await until(() => c.started() === 1, 20_000, 'the request in progress');
    c.proc.kill('SIGTERM');
    await until(async () => (await prove(c.port, { ms: 0 })).status === 503, 5000, 'draining');
    c.proc.kill('SIGTERM');
    const code = await Promise.race([c.exited, new Promise<string>((r) => setTimeout(() => r('still running'), 10_000))]);
    assert.equal(code, 130);
    assert.ok((await long) instanceof Error, 'the connection of the unfinished request was dropped');
  } finally {
    c.proc.kill('SIGKILL');
  }
});
