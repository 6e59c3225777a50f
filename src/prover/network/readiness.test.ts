/**
 * Readiness against the fake Prover Network: a transient GetProgram failure is retried (as the SP1
 * SDK does) and never cached; only definite answers (registered, not registered) are reused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeProverNetwork } from '../../testing/fake-prover-network.js';
import { toHex } from '../../util/bytes.js';
import { proverConfig } from '../../settings/settings.js';
import { NetworkBackend, networkPlan } from './backend.js';
import { PROOF_WRAPPER_VK_HASH, SPELL_CHECKER_VK_HASH } from './charms.js';
import { NetworkSigner } from './signer.js';

const KEY = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const account = new NetworkSigner(KEY).address;
const UNAVAILABLE = 14;
const fastRetry = { retry: { initialMs: 1, maxDelayMs: 2, totalMs: 50 } };

async function backendOn(programs: Set<string>) {
  const net = await new FakeProverNetwork({ variant: 'auction', account, programs, script: () => ({ kind: 'stuck' }) }).start();
  const plan = networkPlan(proverConfig({ APP_ZK_PROVER: 'network', NETWORK_PRIVATE_KEY: KEY, NETWORK_RPC_URL: net.rpcUrl }));
  if ('unavailable' in plan) throw new Error(plan.unavailable);
  return { net, backend: new NetworkBackend(plan, { client: fastRetry, readyCacheMs: 60_000 }) };
}

const programCalls = (net: FakeProverNetwork) => net.calls.filter((c) => c === 'GetProgram').length;

test('one transient UNAVAILABLE from GetProgram costs a retry, not a minute of "not ready"', async () => {
  const { net, backend } = await backendOn(new Set([toHex(SPELL_CHECKER_VK_HASH), toHex(PROOF_WRAPPER_VK_HASH)]));
  try {
    net.failures.set('GetProgram', [UNAVAILABLE]);
    assert.equal(await backend.ready(), true, 'the blip is retried within the same check');
    assert.equal(programCalls(net), 3, 'the failed call, its retry, the second program');
    // the definite answer is reused
    assert.equal(await backend.ready(), true);
    assert.equal(programCalls(net), 3);
  } finally {
    backend.close();
    await net.stop();
  }
});

test('a network that stays unreachable is not cached: the next check asks again; "not registered" is cached', async () => {
  const { net, backend } = await backendOn(new Set([toHex(SPELL_CHECKER_VK_HASH)]));
  try {
    net.failures.set('GetProgram', Array(100).fill(UNAVAILABLE));
    assert.match((await backend.unavailable())!, /cannot reach the prover network/);
    const afterOutage = programCalls(net);
    assert.ok(afterOutage > 1, 'retried before giving up');
    net.failures.set('GetProgram', []);
    // back up: asked again at once, and the definite answer (wrapper not registered) is kept
    assert.match((await backend.unavailable())!, /is not registered/);
    const answered = programCalls(net);
    assert.equal(answered, afterOutage + 2);
    assert.match((await backend.unavailable())!, /is not registered/);
    assert.equal(programCalls(net), answered, 'a definite answer is reused');
  } finally {
    backend.close();
    await net.stop();
  }
});
