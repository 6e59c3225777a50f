/**
 * The start-up log of `charms server --mock` lists what applies in mock mode only, and a server
 * that cannot listen (EADDRINUSE) ends with its error, which says what to do: no info line after it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { charmsBin } from '../testing/cli.js';

test('charms server --mock: start-up fields of mock mode only; a second one on the same port ends with the error', async () => {
  const env = { PATH: process.env.PATH ?? '' };
  const child = spawn(process.execPath, [charmsBin, 'server', '--mock', '--ip', '127.0.0.1', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'], env });
  let log = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      log += d.toString();
      const m = /Server running on 127\.0\.0\.1:(\d+)/.exec(log);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', () => reject(new Error(`server exited: ${log}`)));
  });
  try {
    const line = log.split('\n').find((l) => l.includes('Server running on'))!;
    const fields = JSON.parse(line);
    assert.equal(fields.mock, true);
    for (const k of ['app_prover', 'spell_prover', 'network_key_set', 'prove_api_url', 'scrolls', 'network_rpc_url', 'gpu_service_url'])
      assert.ok(!(k in fields), `${k} does not apply in mock mode: ${line}`);
    assert.equal(fields.cache, 'memory');
    // the same port again: the error is the last thing said
    const second = spawn(process.execPath, [charmsBin, 'server', '--mock', '--ip', '127.0.0.1', '--port', String(port)], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env,
    });
    let err = '';
    second.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => second.once('exit', r));
    assert.notEqual(code, 0);
    const lines = err.trim().split('\n');
    assert.match(lines.at(-1)!, /EADDRINUSE|address already in use/i, err);
    // and it says what to do
    assert.match(
      lines.at(-1)!,
      new RegExp(
        `^Error: cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE\\): the port is in use \\(another process, perhaps another charms server, listens there\\): stop it, or choose another port with --port$`,
      ),
    );
    // said once: not followed by the errno's own "address already in use 127.0.0.1:<port>"
    assert.equal(lines.at(-1)!.split(`127.0.0.1:${port}`).length, 2, lines.at(-1));
  } finally {
    child.kill();
  }
});

test('charms server --mock at LOG_LEVEL=error still says MOCK MODE; an unknown LOG_LEVEL is refused with the allowed values', async () => {
  const child = spawn(process.execPath, [charmsBin, 'server', '--mock', '--ip', '127.0.0.1', '--port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'error' },
  });
  let log = '';
  try {
    const line = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (d: Buffer) => {
        log += d.toString();
        const l = log.split('\n').find((x) => x.includes('MOCK MODE'));
        if (l) resolve(l);
      });
      child.once('exit', () => reject(new Error(`server exited: ${log}`)));
    });
    assert.equal(JSON.parse(line).level, 'warn');
  } finally {
    child.kill();
  }
  assert.ok(!log.includes('Server running on'), 'the info lines stay hidden at LOG_LEVEL=error');

  const bad = spawn(process.execPath, [charmsBin, 'server', '--mock', '--ip', '127.0.0.1', '--port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'verbose' },
  });
  let err = '';
  bad.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => bad.once('exit', r));
  assert.notEqual(code, 0);
  assert.match(err.trim(), /LOG_LEVEL "verbose" is not a log level: use one of error, warn, info, debug, trace$/);
});
