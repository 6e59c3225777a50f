/**
 * The network client and the two Charms stages against a fake Prover Network on loopback: each
 * scripted outcome gets its answer, and a real on-chain spell's public values and Groth16 proof
 * replayed through the fake come out verified.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { decodeCbor } from '../../codec/cbor.js';
import { ValueMap, type Value } from '../../codec/value.js';
import type { CharmsError } from '../../errors.js';
import type { ProveRequest } from '../../model/request.js';
import { spellFromValue, type NormalizedSpell } from '../../model/spell.js';
import { CURRENT_PROTOCOL_VERSION, spellVkFor } from '../../groth16/constants.js';
import { FakeProverNetwork, type Outcome } from '../../testing/fake-prover-network.js';
import { readSharedJson, sharedOrSkip } from '../../testing/shared.js';
import { fromHex, toHex } from '../../util/bytes.js';
import { encodeCompressedProof, encodeGroth16Proof, stdinWithInput } from './bincode.js';
import { PROOF_WRAPPER_VK_HASH, SPELL_CHECKER_VK_BIN, SPELL_CHECKER_VK_HASH, proveSpellOnNetwork, spellProverInputCbor } from './charms.js';
import { NetworkClient } from './client.js';
import { GrpcCode, GrpcError } from './grpc.js';
import { ProofMode, type NetworkVariant } from './proto.js';
import { SP1_CIRCUIT_VERSION, charmsSettings, proveOnNetwork, type ProgressEvent, type ProveContext } from './request.js';
import { NetworkSigner } from './signer.js';

const KEY = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
const signer = new NetworkSigner(KEY);
const ALL = new Set([toHex(SPELL_CHECKER_VK_HASH), toHex(PROOF_WRAPPER_VK_HASH)]);

interface Setup {
  net: FakeProverNetwork;
  ctx: (stage: string) => ProveContext;
  events: ProgressEvent[];
  client: NetworkClient;
}

/** Auction timeout: an hour, except where a test wants the stuck-auction path (a short one would race slow polls). */
async function setup(
  variant: NetworkVariant,
  script: (r: { attempt: number; stdin: Uint8Array }) => Outcome,
  programs = ALL,
  auctionTimeoutMs = 3_600_000,
): Promise<Setup> {
  const net = await new FakeProverNetwork({ variant, account: signer.address, programs, script }).start();
  const client = new NetworkClient(net.rpcUrl, signer, { retry: { initialMs: 1, maxDelayMs: 4, totalMs: 20 } });
  const events: ProgressEvent[] = [];
  const settings = { ...charmsSettings(variant), pollIntervalMs: 1, auctionTimeoutMs };
  return { net, client, events, ctx: (stage) => ({ client, settings, stage, progress: (e) => events.push(e) }) };
}

async function teardown(s: Setup): Promise<void> {
  s.client.close();
  await s.net.stop();
  assert.deepEqual(s.net.errors, [], 'the fake network found no protocol errors');
}

const code = (c: string) => (e: unknown) => (e as CharmsError).code === c;

test('fulfilled (auction): every RequestProof field, signatures, nonces, zstd stdin, download', async () => {
  const proof = randomBytes(1000);
  const s = await setup('auction', () => ({ kind: 'fulfilled', proof, afterPolls: 2 }));
  try {
    const stdin = stdinWithInput(randomBytes(300_000));
    const before = Math.floor(Date.now() / 1000);
    const out = await proveOnNetwork(s.ctx('stage 1'), SPELL_CHECKER_VK_HASH, stdin, ProofMode.COMPRESSED);
    assert.deepEqual(Buffer.from(out), proof);
    assert.equal(s.net.requests.length, 1);
    const r = s.net.requests[0]!;
    assert.deepEqual(r.stdin, stdin, 'the uploaded zstd frame decompresses to the SP1Stdin bincode');
    const b = r.body;
    assert.equal(toHex(b.vkHash), toHex(SPELL_CHECKER_VK_HASH));
    assert.equal(b.version, SP1_CIRCUIT_VERSION);
    assert.equal(b.mode, ProofMode.COMPRESSED);
    assert.equal(b.strategy, 3);
    assert.equal(b.cycleLimit, 16_000_000_000n);
    assert.equal(b.gasLimit, 16_000_000_000n);
    assert.equal(b.minAuctionPeriod, 7n);
    assert.ok(b.deadline >= BigInt(before + 8000) && b.deadline <= BigInt(Math.floor(Date.now() / 1000) + 8000));
    assert.deepEqual(b.whitelist, s.net.allProvers);
    assert.equal(b.stdinPrivate, false);
    assert.equal(b.auction?.maxPricePerPgu, '240000000', 'max price × 1.2 floored to the tick');
    assert.equal(b.auction?.baseFee, '0');
    assert.equal(b.auction?.variant, 0);
    assert.equal(b.auction?.publicValuesHash, undefined);
    assert.equal(toHex(b.auction!.domain), '01'.repeat(32));
    assert.equal(toHex(b.auction!.treasury), '05'.repeat(20));
    assert.equal(s.net.nonce, 1n);
    assert.deepEqual(
      s.events.map((e) => e.status),
      ['uploading stdin', 'requested', 'requested', 'assigned', 'fulfilled', 'downloading proof'],
    );
    assert.ok(s.events.slice(1).every((e) => e.requestId === `0x${toHex(r.id)}` && e.stage === 'stage 1'));
  } finally {
    await teardown(s);
  }
});

test('fulfilled (base variant for reserved / sp1-cluster gateways): no auction fields, no params, no whitelist', async () => {
  const s = await setup('base', () => ({ kind: 'fulfilled', proof: Uint8Array.of(7) }));
  try {
    assert.deepEqual(await proveOnNetwork(s.ctx('stage 2'), PROOF_WRAPPER_VK_HASH, stdinWithInput(Uint8Array.of(1)), ProofMode.GROTH16), Uint8Array.of(7));
    const b = s.net.requests[0]!.body;
    assert.equal(b.auction, undefined);
    assert.equal(b.strategy, 2);
    assert.equal(b.minAuctionPeriod, 0n);
    assert.deepEqual(b.whitelist, []);
    assert.ok(!s.net.calls.includes('GetProofRequestParams') && !s.net.calls.includes('GetProversByUptime'));
  } finally {
    await teardown(s);
  }
});

test('stuck auction: cancelled (signed, next nonce), then retried once with the high-availability whitelist', async () => {
  const s = await setup(
    'auction',
    ({ attempt }) => (attempt === 0 ? { kind: 'stuck' } : { kind: 'fulfilled', proof: Uint8Array.of(1, 2), afterPolls: 0 }),
    ALL,
    20,
  );
  try {
    assert.deepEqual(
      await proveOnNetwork(s.ctx('stage 1'), SPELL_CHECKER_VK_HASH, stdinWithInput(Uint8Array.of(1)), ProofMode.COMPRESSED),
      Uint8Array.of(1, 2),
    );
    assert.equal(s.net.requests.length, 2);
    assert.equal(s.net.requests[0]!.cancelled, true);
    assert.deepEqual(s.net.requests[1]!.body.whitelist, s.net.haProvers);
    assert.equal(s.net.nonce, 3n, 'request, cancel, request');
    assert.ok(s.events.some((e) => e.status === 'auction timed out: cancelling'));
  } finally {
    await teardown(s);
  }
});

test('unfulfillable twice: retried once, then a transient failure; unexecutable: not retried', async () => {
  const s = await setup('auction', () => ({ kind: 'unfulfillable' }));
  try {
    await assert.rejects(
      proveOnNetwork(s.ctx('stage 1'), SPELL_CHECKER_VK_HASH, stdinWithInput(Uint8Array.of(1)), ProofMode.COMPRESSED),
      (e: Error & { kind?: string }) => e.kind === 'unfulfillable',
    );
    assert.equal(s.net.requests.length, 2);
  } finally {
    await teardown(s);
  }
  const u = await setup('auction', () => ({ kind: 'unexecutable' }));
  try {
    await assert.rejects(
      proveOnNetwork(u.ctx('stage 1'), SPELL_CHECKER_VK_HASH, stdinWithInput(Uint8Array.of(1)), ProofMode.COMPRESSED),
      (e: Error & { kind?: string }) => e.kind === 'unexecutable',
    );
    assert.equal(u.net.requests.length, 1);
  } finally {
    await teardown(u);
  }
});

test('expired deadline: a timeout failure after the one retry', async () => {
  const s = await setup('auction', () => ({ kind: 'expired' }));
  try {
    await assert.rejects(
      proveOnNetwork(s.ctx('stage 2'), PROOF_WRAPPER_VK_HASH, stdinWithInput(Uint8Array.of(1)), ProofMode.GROTH16),
      (e: Error & { kind?: string }) => e.kind === 'timeout',
    );
    assert.equal(s.net.requests.length, 2);
  } finally {
    await teardown(s);
  }
});

test('transient UNAVAILABLE is retried with backoff (fresh nonce); it stays an error when it persists', async () => {
  const s = await setup('auction', () => ({ kind: 'fulfilled', proof: Uint8Array.of(3) }));
  try {
    s.net.failures.set('RequestProof', [GrpcCode.UNAVAILABLE, GrpcCode.UNAVAILABLE]);
    s.net.failures.set('GetProofRequestStatus', [GrpcCode.INTERNAL]);
    assert.deepEqual(await proveOnNetwork(s.ctx('stage 1'), SPELL_CHECKER_VK_HASH, stdinWithInput(Uint8Array.of(1)), ProofMode.COMPRESSED), Uint8Array.of(3));
    assert.equal(s.net.calls.filter((c) => c === 'RequestProof').length, 3);
    assert.equal(s.net.calls.filter((c) => c === 'GetNonce').length, 3, 'a nonce per attempt');
    s.net.failures.set('GetBalance', Array(50).fill(GrpcCode.UNAVAILABLE));
    await assert.rejects(s.client.getBalance(), (e) => e instanceof GrpcError && e.code === GrpcCode.UNAVAILABLE);
    s.net.failures.set('GetBalance', [GrpcCode.PERMISSION_DENIED]);
    await assert.rejects(s.client.getBalance(), (e) => e instanceof GrpcError && e.code === GrpcCode.PERMISSION_DENIED);
    assert.equal(
      s.net.calls.filter((c) => c === 'GetBalance').length,
      7 + 1,
      'backoff 1, 2, 4, 4, 4, 4 ms fits the 20 ms budget: 7 attempts; a non-transient code is not retried',
    );
    assert.equal(await s.client.getBalance(), '1500000000000000000');
  } finally {
    await teardown(s);
  }
});

test('an unregistered program is named before anything is paid for', async () => {
  const s = await setup('auction', () => ({ kind: 'fulfilled', proof: Uint8Array.of(3) }), new Set());
  try {
    await assert.rejects(
      proveOnNetwork(s.ctx('stage 1'), SPELL_CHECKER_VK_HASH, stdinWithInput(Uint8Array.of(1)), ProofMode.COMPRESSED),
      (e: CharmsError) => e.code === 'PROVER_UNAVAILABLE' && e.message.includes(toHex(SPELL_CHECKER_VK_HASH)),
    );
    assert.equal(s.net.requests.length, 0);
    assert.equal(s.net.artifacts.size, 0);
  } finally {
    await teardown(s);
  }
});

test('a deadline: an unresponsive gateway fails with DEADLINE_EXCEEDED', async () => {
  const http2 = await import('node:http2');
  const server = http2.createServer();
  server.on('stream', () => {}); // never answers
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const client = new NetworkClient(`http://127.0.0.1:${port}`, signer, { defaultTimeoutMs: 50, retry: { initialMs: 1, maxDelayMs: 1, totalMs: 0 } });
  try {
    await assert.rejects(client.getNonce(), (e) => e instanceof GrpcError && e.code === GrpcCode.DEADLINE_EXCEEDED);
  } finally {
    client.close();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

// ------------------------------------------------------------------------------ two stages

interface RealVector {
  version: number;
  public_values_hex: string;
  proof_hex: string;
  public_inputs_be_hex: string[];
}

function realV12(): { spell: NormalizedSpell; pv: Uint8Array; proof: Uint8Array; inputs: string[] } {
  const v = readSharedJson<RealVector[]>('vectors', 'groth16-real-btc.json').find((x) => x.version === 12)!;
  const pv = fromHex(v.public_values_hex);
  const [, spellV] = decodeCbor(pv) as Value[];
  return { spell: spellFromValue(spellV!, false), pv, proof: fromHex(v.proof_hex), inputs: v.public_inputs_be_hex.map((h) => BigInt(`0x${h}`).toString(10)) };
}

const request = (spell: NormalizedSpell): ProveRequest => ({
  spell,
  app_private_inputs: [],
  tx_ins_beamed_source_utxos: new Map(),
  binaries: [],
  app_signatures: [],
  prev_txs: [],
  change_address: 'bc1q',
  fee_rate: 2,
  chain: 'bitcoin',
});

/** A fake network that plays both Charms programs: stage 1 checks the spell checker input, stage 2 the splice. */
function charmsScript(v: ReturnType<typeof realV12>, opts: { stage1Pv?: Uint8Array; badProof?: boolean; stage1?: Outcome['kind'] } = {}) {
  const recursionProof = randomBytes(5000);
  const seen: string[] = [];
  const script = ({ stdin }: { stdin: Uint8Array }): Outcome => {
    const dv = new DataView(stdin.buffer, stdin.byteOffset, stdin.length);
    assert.equal(dv.getBigUint64(0, true), 1n, 'one stdin buffer');
    const len = Number(dv.getBigUint64(8, true));
    const input = stdin.subarray(16, 16 + len);
    const rest = stdin.subarray(16 + len);
    assert.equal(new DataView(rest.buffer, rest.byteOffset).getBigUint64(0, true), 0n, 'ptr 0');
    const proofs = new DataView(rest.buffer, rest.byteOffset).getBigUint64(8, true);
    if (proofs === 0n) {
      seen.push('stage 1');
      assert.equal(rest.length, 16);
      const m = decodeCbor(input) as ValueMap;
      assert.deepEqual(
        m.entries.map(([k]) => k),
        ['self_spell_vk', 'prev_txs', 'spell', 'tx_ins_beamed_source_utxos', 'app_input'],
      );
      if (opts.stage1 && opts.stage1 !== 'fulfilled') return { kind: opts.stage1 } as Outcome;
      return { kind: 'fulfilled', proof: encodeCompressedProof(recursionProof, opts.stage1Pv ?? v.pv, 'v6.1.0') };
    }
    seen.push('stage 2');
    assert.equal(toHex(input), toHex(v.pv), 'stage 2 commits stage 1 public values');
    assert.equal(toHex(rest.subarray(16, 16 + recursionProof.length)), toHex(recursionProof), 'recursion proof spliced verbatim');
    assert.equal(toHex(rest.subarray(16 + recursionProof.length)), toHex(SPELL_CHECKER_VK_BIN), 'spell checker vk');
    const encodedProof = Uint8Array.from(v.proof.subarray(4));
    if (opts.badProof) encodedProof[200]! ^= 1;
    const vkeyHash = new Uint8Array(32);
    vkeyHash.set(v.proof.subarray(0, 4));
    return {
      kind: 'fulfilled',
      proof: encodeGroth16Proof({
        publicInputs: v.inputs.concat(['0', '0', '0']).slice(0, 5),
        encodedProof,
        rawProof: '',
        vkeyHash,
        publicValues: v.pv,
        sp1Version: 'v6.1.0',
      }),
    };
  };
  return { script, seen };
}

test('two stages end to end: a real on-chain spell (v12) replayed through the fake comes out as its verified 356-byte proof', async (t) => {
  if (!sharedOrSkip(t)) return;
  const v = realV12();
  const { script, seen } = charmsScript(v);
  const s = await setup('auction', script);
  try {
    const proof = await proveSpellOnNetwork(request(v.spell), v.spell, { app: s.ctx('stage 1 (spell checker)'), wrapper: s.ctx('stage 2 (SNARK wrapper)') });
    assert.equal(toHex(proof), toHex(v.proof));
    assert.equal(proof.length, 356);
    assert.deepEqual(seen, ['stage 1', 'stage 2']);
    assert.deepEqual(
      s.net.requests.map((r) => [toHex(r.body.vkHash), r.body.mode]),
      [
        [toHex(SPELL_CHECKER_VK_HASH), ProofMode.COMPRESSED],
        [toHex(PROOF_WRAPPER_VK_HASH), ProofMode.GROTH16],
      ],
    );
  } finally {
    await teardown(s);
  }
});

test('two stages: each failure gets its answer (unexecutable 4xx, wrong stage-1 public values, unverifiable proof, stage-2 transient)', async (t) => {
  if (!sharedOrSkip(t)) return;
  const v = realV12();
  const run = async (
    opts: Parameters<typeof charmsScript>[1],
    check: (e: CharmsError) => boolean,
    script?: (r: { attempt: number; stdin: Uint8Array }) => Outcome,
  ) => {
    const s = await setup('auction', script ?? charmsScript(v, opts).script);
    try {
      await assert.rejects(proveSpellOnNetwork(request(v.spell), v.spell, { app: s.ctx('stage 1'), wrapper: s.ctx('stage 2') }), (e: CharmsError) => {
        assert.ok(check(e), `${JSON.stringify(opts)} ${e.code}: ${e.message}`);
        return true;
      });
      return s.net.requests.length;
    } finally {
      await teardown(s);
    }
  };
  assert.equal(await run({ stage1: 'unexecutable' }, code('SPELL_UNEXECUTABLE')), 1);
  const other = Uint8Array.from(v.pv);
  other[other.length - 1]! ^= 1;
  assert.equal(await run({ stage1Pv: other }, (e) => e.code === 'PROVER_TRANSIENT' && /expected public values/.test(e.message)), 1, 'stage 2 not paid for');
  assert.equal(await run({ badProof: true }, (e) => e.code === 'PROOF_UNVERIFIED'), 2);
  const { script } = charmsScript(v);
  let n = 0;
  assert.equal(
    await run(
      {},
      (e) => e.code === 'PROVER_TRANSIENT' && /stage 2/.test(e.message),
      (r) => (n++ === 0 ? script(r) : { kind: 'unfulfillable' }),
    ),
    3,
  );
  // a server that stops between the stages pays for no stage 2
  {
    const stopping = new AbortController();
    const { script: s1 } = charmsScript(v);
    const s = await setup('auction', (r) => {
      const out = s1(r);
      stopping.abort(); // SIGTERM while stage 1 runs
      return out;
    });
    try {
      await assert.rejects(
        proveSpellOnNetwork(request(v.spell), v.spell, { app: s.ctx('stage 1'), wrapper: s.ctx('stage 2'), stopping: stopping.signal }),
        code('SERVER_BUSY'),
      );
      assert.equal(s.net.requests.length, 1, 'stage 2 not requested');
    } finally {
      await teardown(s);
    }
  }
  const mockSpell = { ...v.spell, mock: true };
  await assert.rejects(proveSpellOnNetwork(request(mockSpell), mockSpell, { app: {} as ProveContext, wrapper: {} as ProveContext }), code('INVALID_SPELL'));
});

test('SpellProverInput CBOR, field by field as the reference struct (charms-client SpellProverInput, charms-data AppInput)', () => {
  const spell: NormalizedSpell = { version: CURRENT_PROTOCOL_VERSION, tx: { ins: [], outs: [] }, app_public_inputs: [], versioned_apps: [], mock: false };
  const vk = new Uint8Array(32).fill(7);
  const app = { tag: 'n', identity: new Uint8Array(32).fill(1), vk };
  const req: ProveRequest = {
    ...request(spell),
    binaries: [[vk, Uint8Array.of(0, 97, 115, 109)]],
    app_private_inputs: [[app, 'secret'] as never],
    app_signatures: [],
    prev_txs: [{ chain: 'bitcoin', hex: '0200' }],
    tx_ins_beamed_source_utxos: new Map([[3, { utxo: { txid: new Uint8Array(32).fill(9), vout: 1 }, nonce: 5n }]]) as never,
  };
  const m = decodeCbor(spellProverInputCbor(req, spell)) as ValueMap;
  assert.deepEqual(
    m.entries.map(([k]) => k),
    ['self_spell_vk', 'prev_txs', 'spell', 'tx_ins_beamed_source_utxos', 'app_input'],
  );
  assert.deepEqual(m.get('self_spell_vk'), Array.from(spellVkFor(CURRENT_PROTOCOL_VERSION, false), BigInt), '[u8; 32] as an array of integers');
  assert.deepEqual(m.get('prev_txs'), [new ValueMap([['bitcoin', '0200']])], 'Tx: externally tagged enum, hex');
  assert.deepEqual((m.get('spell') as ValueMap).entries.map(([k]) => k).slice(0, 2), ['version', 'tx']);
  const beamed = m.get('tx_ins_beamed_source_utxos') as ValueMap;
  assert.deepEqual(
    beamed.entries.map(([k]) => k),
    [3n],
    'BTreeMap<usize, _>: integer keys',
  );
  const ai = m.get('app_input') as ValueMap;
  assert.deepEqual(
    ai.entries.map(([k]) => k),
    ['app_binaries', 'app_private_inputs'],
    'app_signatures skipped when empty',
  );
  assert.deepEqual((ai.get('app_binaries') as ValueMap).entries, [[Array.from(vk, BigInt), [0n, 97n, 115n, 109n]]], 'B32 → Vec<u8>, both as integer arrays');
  assert.deepEqual(
    (ai.get('app_private_inputs') as ValueMap).entries.map(([, x]) => x),
    ['secret'],
  );
  // no binaries → app_input is None (null)
  assert.equal((decodeCbor(spellProverInputCbor(request(spell), spell)) as ValueMap).get('app_input'), null);
});
