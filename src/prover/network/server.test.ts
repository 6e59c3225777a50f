/**
 * The proving server with the network backend against the fake Prover Network: readiness follows
 * program registration, a server that cannot prove refuses before running app contracts, and each
 * network outcome reaches the HTTP client as its status and code (no transaction without a proof
 * that verifies).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decodeCbor } from '../../codec/cbor.js';
import type { ValueMap, Value } from '../../codec/value.js';
import { toJsonCompact } from '../../codec/json.js';
import { proveRequestToValue } from '../../model/request.js';
import { encodeSpellCbor, spellFromValue } from '../../model/spell.js';
import { publicValuesFor } from '../../groth16/public-values.js';
import { shutdownRunner } from '../../runner/index.js';
import { startProveServer } from '../../prove-server/server.js';
import { MemoryCache } from '../../infra/cache.js';
import { lineLogger } from '../../infra/log.js';
import { FakeProverNetwork, type Outcome } from '../../testing/fake-prover-network.js';
import { bitcoinProveRequest, funding } from '../../testing/fixtures.js';
import { h1 } from '../../testing/http.js';
import { readSharedJson, readSharedText, sharedOrSkip } from '../../testing/shared.js';
import { fromHex, toHex } from '../../util/bytes.js';
import { proverConfig } from '../../settings/settings.js';
import { LocalProveService, bodyHandler } from '../service.js';
import { NetworkBackend, networkPlan } from './backend.js';
import { encodeCompressedProof, encodeGroth16Proof } from './bincode.js';
import { PROOF_WRAPPER_VK_HASH, SPELL_CHECKER_VK_HASH } from './charms.js';
import { NetworkSigner } from './signer.js';

after(() => shutdownRunner());

const KEY = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const account = new NetworkSigner(KEY).address;

/** Stage 1 commits CBOR((SPELL_VK, spell)) of the spell in its input; stage 2 returns a real but unrelated Groth16 proof. */
function script(seenSpells: Value[], stage1: Outcome['kind'] = 'fulfilled') {
  const real = readSharedJson<{ version: number; proof_hex: string }[]>('vectors', 'groth16-real-btc.json').find((v) => v.version === 12)!;
  return ({ stdin }: { stdin: Uint8Array }): Outcome => {
    const dv = new DataView(stdin.buffer, stdin.byteOffset, stdin.length);
    const len = Number(dv.getBigUint64(8, true));
    const input = stdin.subarray(16, 16 + len);
    if (dv.getBigUint64(16 + len + 8, true) === 0n) {
      if (stage1 !== 'fulfilled') return { kind: stage1 } as Outcome;
      const spellV = (decodeCbor(input) as ValueMap).get('spell')!;
      seenSpells.push(spellV);
      const spell = spellFromValue(spellV, false);
      return {
        kind: 'fulfilled',
        proof: encodeCompressedProof(randomBytes(64), publicValuesFor(spell.version, encodeSpellCbor(spell), false), 'v6.1.0'),
        afterPolls: 0,
      };
    }
    const proof = fromHex(real.proof_hex);
    const vkeyHash = new Uint8Array(32);
    vkeyHash.set(proof.subarray(0, 4));
    return {
      kind: 'fulfilled',
      afterPolls: 0,
      proof: encodeGroth16Proof({
        publicInputs: ['0', '0', '0', '0', '0'],
        encodedProof: proof.subarray(4),
        rawProof: '',
        vkeyHash,
        publicValues: input,
        sp1Version: 'v6.1.0',
      }),
    };
  };
}

async function serve(programs: Set<string>, outcome?: Outcome['kind'], cache?: MemoryCache) {
  const seen: Value[] = [];
  const net = await new FakeProverNetwork({ variant: 'auction', account, programs, script: script(seen, outcome) }).start();
  const plan = networkPlan(proverConfig({ APP_ZK_PROVER: 'network', NETWORK_PRIVATE_KEY: KEY, NETWORK_RPC_URL: net.rpcUrl }));
  if ('unavailable' in plan) throw new Error(plan.unavailable);
  const logs: string[] = [];
  const backend = new NetworkBackend(plan, { log: lineLogger((l) => logs.push(l.trimEnd())), settings: { pollIntervalMs: 1 }, readyCacheMs: 0 });
  let appRuns = 0;
  const service = new LocalProveService({
    backend,
    runApp: async () => {
      appRuns++;
      throw new Error('no app runs in these spells');
    },
  });
  const server = await startProveServer({ host: '127.0.0.1', port: 0, prove: bodyHandler(service), ready: () => service.ready(), ...(cache ? { cache } : {}) });
  return {
    net,
    seen,
    logs,
    server,
    appRuns: () => appRuns,
    async close() {
      backend.close();
      await server.close();
      await net.stop();
    },
  };
}

function body(): string {
  const f = funding(readSharedText);
  const req = bitcoinProveRequest(
    f,
    `version: 15\ntx:\n  ins: [${f.txid}:0]\n  outs: [{}]\n  coins: [{amount: 1000, dest: ${f.dest}}]\napp_public_inputs: {}\n`,
    [f.hex],
  );
  return toJsonCompact(proveRequestToValue(req, true));
}

test('unregistered programs: /ready is 503 and a prove request is refused (503) before anything runs or is paid', async (t) => {
  if (!sharedOrSkip(t)) return;
  const s = await serve(new Set());
  try {
    assert.equal((await h1(s.server.port, 'GET', '/ready')).status, 503);
    const r = await h1(s.server.port, 'POST', '/spells/prove', body(), { 'content-type': 'application/json' });
    assert.equal(r.status, 503);
    const j = JSON.parse(r.body.toString());
    assert.equal(j.code, 'PROVER_UNAVAILABLE');
    assert.match(j.error, new RegExp(toHex(SPELL_CHECKER_VK_HASH)));
    assert.equal(s.appRuns(), 0);
    assert.equal(s.net.requests.length, 0);
  } finally {
    await s.close();
  }
});

test('both stages run with the full spell; a stage-2 proof that does not verify is a 500 PROOF_UNVERIFIED, never a transaction', async (t) => {
  if (!sharedOrSkip(t)) return;
  const s = await serve(new Set([toHex(SPELL_CHECKER_VK_HASH), toHex(PROOF_WRAPPER_VK_HASH)]));
  try {
    assert.equal((await h1(s.server.port, 'GET', '/ready')).status, 200);
    const r = await h1(s.server.port, 'POST', '/spells/prove', body(), { 'content-type': 'application/json' });
    const j = JSON.parse(r.body.toString());
    assert.equal(r.status, 500, r.body.toString());
    assert.equal(j.code, 'PROOF_UNVERIFIED');
    assert.equal(s.net.requests.length, 2);
    // stage 1 saw the full spell: ins and coins kept
    const tx = (s.seen[0] as ValueMap).get('tx') as ValueMap;
    assert.ok(tx.get('ins') !== undefined && tx.get('coins') !== undefined);
    assert.ok(s.logs.some((l) => /stage 1 \(spell checker\): requested \(request 0x/.test(l)));
    assert.ok(s.logs.some((l) => /stage 2 \(SNARK wrapper\): fulfilled/.test(l)));
    assert.ok(!s.logs.join('\n').includes(KEY));
  } finally {
    await s.close();
  }
});

test("a spell the network cannot execute is the caller's: 400 SPELL_UNEXECUTABLE", async (t) => {
  if (!sharedOrSkip(t)) return;
  const s = await serve(new Set([toHex(SPELL_CHECKER_VK_HASH), toHex(PROOF_WRAPPER_VK_HASH)]), 'unexecutable');
  try {
    const r = await h1(s.server.port, 'POST', '/spells/prove', body(), { 'content-type': 'application/json' });
    assert.equal(r.status, 400);
    assert.equal(JSON.parse(r.body.toString()).code, 'SPELL_UNEXECUTABLE');
    assert.equal(s.net.requests.length, 1);
  } finally {
    await s.close();
  }
});

test('`charms-prover network status`: address (never the key), balance, both programs; exit 1 when one is missing', async () => {
  const { execFile } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const bin = fileURLToPath(new URL('../../cli/charms-prover.js', import.meta.url));
  const runStatus = (rpc: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [bin, 'network', 'status'],
        { env: { PATH: process.env.PATH ?? '', APP_ZK_PROVER: 'network', NETWORK_PRIVATE_KEY: KEY, NETWORK_RPC_URL: rpc } },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  for (const [programs, expected] of [
    [new Set([toHex(SPELL_CHECKER_VK_HASH), toHex(PROOF_WRAPPER_VK_HASH)]), 0],
    [new Set([toHex(SPELL_CHECKER_VK_HASH)]), 1],
  ] as const) {
    const net = await new FakeProverNetwork({ variant: 'auction', account, programs: new Set(programs), script: () => ({ kind: 'stuck' }) }).start();
    try {
      const r = await runStatus(net.rpcUrl);
      assert.equal(r.code, expected, r.stderr);
      const j = JSON.parse(r.stdout);
      assert.equal(j.address, `0x${toHex(account)}`);
      assert.equal(j.spell_checker.registered, true);
      assert.equal(j.spell_checker.balance_prove_wei, '1500000000000000000');
      assert.equal(j.proof_wrapper.registered, expected === 0);
      assert.equal(j.ready, expected === 0);
      assert.ok(!(r.stdout + r.stderr).includes(KEY));
      assert.equal(net.requests.length, 0, 'a status check pays nothing');
    } finally {
      await net.stop();
    }
  }
});

test("identical concurrent requests share one network proof (the cache's in-flight dedup)", async (t) => {
  if (!sharedOrSkip(t)) return;
  const s = await serve(new Set([toHex(SPELL_CHECKER_VK_HASH), toHex(PROOF_WRAPPER_VK_HASH)]), 'unfulfillable', new MemoryCache());
  try {
    const b = body();
    const answers = await Promise.all([1, 2, 3].map(() => h1(s.server.port, 'POST', '/spells/prove', b, { 'content-type': 'application/json' })));
    for (const r of answers) {
      assert.equal(r.status, 500);
      assert.equal(JSON.parse(r.body.toString()).code, 'PROVER_TRANSIENT');
    }
    assert.equal(s.net.requests.length, 2, 'one stage-1 request and its one retry, for three callers');
  } finally {
    await s.close();
  }
});
