import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { skipOrFail } from '../../testing/require.js';
import { toHex } from '../../util/bytes.js';
import {
  decodeParams,
  decodeStatus,
  encodeCancelBody,
  encodeCreateArtifactRequest,
  encodeRequestProofBody,
  encodeSigned,
  parseMessage,
  type RequestProofBody,
} from './proto.js';
import { decodeRequestProofBody, encodeParams, encodeStatus } from '../../testing/proto-server.js';

/** The messages re-typed from SDK 6.3.0's prost code (tags as in ../shared/protocol/sp1-proving.md §1.3). */
const PROTO = `
syntax = "proto3";
package t;
message AuctionBody {
  uint64 nonce = 1; bytes vk_hash = 2; string version = 3; int32 mode = 4; int32 strategy = 5;
  string stdin_uri = 6; uint64 deadline = 7; uint64 cycle_limit = 8; uint64 gas_limit = 9;
  uint64 min_auction_period = 10; repeated bytes whitelist = 11; bytes domain = 12; bytes auctioneer = 13;
  bytes executor = 14; bytes verifier = 15; optional bytes public_values_hash = 16; string base_fee = 17;
  string max_price_per_pgu = 18; int32 variant = 19; bytes treasury = 20; bool stdin_private = 21;
}
message BaseBody {
  uint64 nonce = 1; bytes vk_hash = 2; string version = 3; int32 mode = 4; int32 strategy = 5;
  string stdin_uri = 6; uint64 deadline = 7; uint64 cycle_limit = 8; uint64 gas_limit = 9;
  uint64 min_auction_period = 10; repeated bytes whitelist = 11; bool stdin_private = 12;
}
message Signed { int32 format = 1; bytes signature = 2; AuctionBody body = 3; }
message CancelBody { uint64 nonce = 1; bytes request_id = 2; }
message CreateArtifact { bytes signature = 1; int32 artifact_type = 2; }
message Params { bytes domain = 1; bytes auctioneer = 2; bytes executor = 3; bytes verifier = 4;
  string max_price_per_pgu = 5; string base_fee = 6; bytes treasury = 7; uint64 tick_size = 8; }
message Status { int32 fulfillment_status = 1; int32 execution_status = 2; bytes request_tx_hash = 3;
  uint64 deadline = 4; optional bytes fulfill_tx_hash = 5; optional string proof_uri = 6;
  optional bytes public_values_hash = 7; optional string proof_public_uri = 8; }
`;

function protoc(t: { skip: (m?: string) => void }): ((type: string, text: string) => string) | undefined {
  if (spawnSync('protoc', ['--version']).status !== 0) {
    skipOrFail(t, 'protoc not found (Debian protobuf-compiler)');
    return undefined;
  }
  const dir = mkdtempSync(join(tmpdir(), 'proto-'));
  writeFileSync(join(dir, 't.proto'), PROTO);
  return (type, text) => {
    const r = spawnSync('protoc', [`--proto_path=${dir}`, `--encode=t.${type}`, 't.proto'], { input: text });
    assert.equal(r.status, 0, r.stderr.toString());
    return toHex(r.stdout);
  };
}

const b = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));
const esc = (u: Uint8Array) => [...u].map((x) => `\\${x.toString(8).padStart(3, '0')}`).join('');

const auctionBody: RequestProofBody = {
  nonce: 42n,
  vkHash: b('236d14fd434c2c364f9a29b7439e2a2e4149e22b654bd417707a834e34974771'),
  version: 'sp1-v6.1.0',
  mode: 2,
  strategy: 3,
  stdinUri: 'artifact://abc',
  deadline: 1_800_000_000n,
  cycleLimit: 16_000_000_000n,
  gasLimit: 16_000_000_000n,
  minAuctionPeriod: 7n,
  whitelist: [b('11'.repeat(20)), b('22'.repeat(20))],
  auction: {
    domain: b('aa'.repeat(32)),
    auctioneer: b('bb'.repeat(20)),
    executor: b('cc'.repeat(20)),
    verifier: b('dd'.repeat(20)),
    baseFee: '0',
    maxPricePerPgu: '240000000',
    variant: 0,
    treasury: b('ee'.repeat(20)),
  },
  stdinPrivate: false,
};

const auctionText = (x: RequestProofBody) =>
  [
    `nonce: ${x.nonce}`,
    `vk_hash: "${esc(x.vkHash)}"`,
    `version: "${x.version}"`,
    `mode: ${x.mode}`,
    `strategy: ${x.strategy}`,
    `stdin_uri: "${x.stdinUri}"`,
    `deadline: ${x.deadline}`,
    `cycle_limit: ${x.cycleLimit}`,
    `gas_limit: ${x.gasLimit}`,
    `min_auction_period: ${x.minAuctionPeriod}`,
    ...x.whitelist.map((w) => `whitelist: "${esc(w)}"`),
    `domain: "${esc(x.auction!.domain)}"`,
    `auctioneer: "${esc(x.auction!.auctioneer)}"`,
    `executor: "${esc(x.auction!.executor)}"`,
    `verifier: "${esc(x.auction!.verifier)}"`,
    ...(x.auction!.publicValuesHash ? [`public_values_hash: "${esc(x.auction!.publicValuesHash)}"`] : []),
    `base_fee: "${x.auction!.baseFee}"`,
    `max_price_per_pgu: "${x.auction!.maxPricePerPgu}"`,
    `variant: ${x.auction!.variant}`, // explicit default: protoc must omit it, and so must we
    `treasury: "${esc(x.auction!.treasury)}"`,
    `stdin_private: ${x.stdinPrivate}`,
  ].join('\n');

test('RequestProof bodies are byte-identical to protoc --encode (auction, base, optional, defaults omitted)', (t) => {
  const enc = protoc(t);
  if (!enc) return;
  assert.equal(toHex(encodeRequestProofBody(auctionBody)), enc('AuctionBody', auctionText(auctionBody)));
  // optional public_values_hash set to empty bytes: present on the wire; stdin_private true.
  const withPvh: RequestProofBody = { ...auctionBody, stdinPrivate: true, auction: { ...auctionBody.auction!, publicValuesHash: new Uint8Array() } };
  assert.equal(toHex(encodeRequestProofBody(withPvh)), enc('AuctionBody', auctionText(withPvh)));
  // all-default body: empty.
  const zero: RequestProofBody = {
    ...auctionBody,
    nonce: 0n,
    vkHash: new Uint8Array(),
    version: '',
    whitelist: [],
    minAuctionPeriod: 0n,
    auction: { ...auctionBody.auction!, baseFee: '', maxPricePerPgu: '' },
  };
  assert.equal(toHex(encodeRequestProofBody(zero)), enc('AuctionBody', auctionText(zero)));
  // base variant: tags 1–11, stdin_private at 12.
  const base: RequestProofBody = { ...auctionBody, strategy: 2, minAuctionPeriod: 0n, whitelist: [], stdinPrivate: true };
  delete base.auction;
  const baseText = `nonce: 42\nvk_hash: "${esc(base.vkHash)}"\nversion: "sp1-v6.1.0"\nmode: 2\nstrategy: 2\nstdin_uri: "artifact://abc"\ndeadline: 1800000000\ncycle_limit: 16000000000\ngas_limit: 16000000000\nstdin_private: true`;
  assert.equal(toHex(encodeRequestProofBody(base)), enc('BaseBody', baseText));
  // round trips
  assert.deepEqual(decodeRequestProofBody(encodeRequestProofBody(withPvh), 'auction'), withPvh);
  assert.deepEqual(decodeRequestProofBody(encodeRequestProofBody(base), 'base'), base);
});

test('envelopes, cancel, create-artifact, params and status match protoc', (t) => {
  const enc = protoc(t);
  if (!enc) return;
  const sig = b('01'.repeat(64) + '1b');
  const body = encodeRequestProofBody(auctionBody);
  assert.equal(toHex(encodeSigned(sig, body)), enc('Signed', `format: 1\nsignature: "${esc(sig)}"\nbody { ${auctionText(auctionBody)} }`));
  assert.equal(toHex(encodeCancelBody(7n, b('ab'.repeat(32)))), enc('CancelBody', `nonce: 7\nrequest_id: "${esc(b('ab'.repeat(32)))}"`));
  assert.equal(toHex(encodeCancelBody(0n, b('ab'.repeat(32)))), enc('CancelBody', `request_id: "${esc(b('ab'.repeat(32)))}"`));
  assert.equal(toHex(encodeCreateArtifactRequest(sig, 2)), enc('CreateArtifact', `signature: "${esc(sig)}"\nartifact_type: 2`));
  const params = {
    domain: b('01'.repeat(32)),
    auctioneer: b('02'.repeat(20)),
    executor: b('03'.repeat(20)),
    verifier: b('04'.repeat(20)),
    maxPricePerPgu: '200000000',
    baseFee: '0',
    treasury: b('05'.repeat(20)),
    tickSize: 1000n,
  };
  const paramsHex = enc(
    'Params',
    `domain: "${esc(params.domain)}" auctioneer: "${esc(params.auctioneer)}" executor: "${esc(params.executor)}" verifier: "${esc(params.verifier)}" max_price_per_pgu: "200000000" base_fee: "0" treasury: "${esc(params.treasury)}" tick_size: 1000`,
  );
  assert.equal(toHex(encodeParams(params)), paramsHex);
  assert.deepEqual(decodeParams(b(paramsHex)), params);
  const statusHex = enc(
    'Status',
    `fulfillment_status: 3 execution_status: 2 request_tx_hash: "\\001" deadline: 99 proof_uri: "http://x/p" proof_public_uri: "ignored"`,
  );
  const st = decodeStatus(b(statusHex));
  assert.deepEqual(st, { fulfillmentStatus: 3, executionStatus: 2, requestTxHash: b('01'), deadline: 99n, proofUri: 'http://x/p' });
  assert.equal(
    toHex(encodeStatus(st)),
    enc('Status', `fulfillment_status: 3 execution_status: 2 request_tx_hash: "\\001" deadline: 99 proof_uri: "http://x/p"`),
  );
});

test('the reader refuses malformed protobuf without crashing', () => {
  for (const bad of ['08', '0a05aa', '0f', '00', '08ffffffffffffffffffff01'])
    assert.throws(
      () => parseMessage(b(bad)),
      (e: Error & { code?: string }) => e.code === 'UPSTREAM_FAILED',
    );
  // unknown fields and fixed-width fields are skipped
  assert.deepEqual([...parseMessage(b('0d01020304' + '0801')).keys()], [1]);
});
