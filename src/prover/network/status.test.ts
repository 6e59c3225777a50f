/**
 * `charms-prover network status` as an operator first runs it: a key but no APP_ZK_PROVER checks
 * the network account (not the CPU backend), a custom RPC is not called "mainnet", and an RPC URL
 * that is not a URL is named by its variable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FakeProverNetwork } from '../../testing/fake-prover-network.js';
import { toHex } from '../../util/bytes.js';
import { PROOF_WRAPPER_VK_HASH, SPELL_CHECKER_VK_HASH } from './charms.js';
import { NetworkSigner } from './signer.js';

const KEY = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const account = new NetworkSigner(KEY).address;
const bin = fileURLToPath(new URL('../../cli/charms-prover.js', import.meta.url));

const runStatus = (env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [bin, 'network', 'status'], { env: { PATH: process.env.PATH ?? '', ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });

test('network status with NETWORK_PRIVATE_KEY but no APP_ZK_PROVER checks the account; a custom RPC is plain "auction"', async () => {
  const programs = new Set([toHex(SPELL_CHECKER_VK_HASH), toHex(PROOF_WRAPPER_VK_HASH)]);
  const net = await new FakeProverNetwork({ variant: 'auction', account, programs, script: () => ({ kind: 'stuck' }) }).start();
  try {
    const r = await runStatus({ NETWORK_PRIVATE_KEY: KEY, NETWORK_RPC_URL: net.rpcUrl });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /CPU/);
    assert.match(r.stderr, /APP_ZK_PROVER is not "network"/);
    const j = JSON.parse(r.stdout);
    assert.equal(j.ready, true);
    assert.equal(j.spell_checker.mode, 'auction');
    assert.equal(j.proof_wrapper.mode, 'auction');
    assert.ok(!(r.stdout + r.stderr).includes(KEY));
  } finally {
    await net.stop();
  }
});

test('network status with NETWORK_RPC_URL=notaurl names the variable', async () => {
  const r = await runStatus({ APP_ZK_PROVER: 'network', NETWORK_PRIVATE_KEY: KEY, NETWORK_RPC_URL: 'notaurl' });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /NETWORK_RPC_URL="notaurl" is not an http\(s\) URL/);
});
