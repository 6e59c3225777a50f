import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REFUSED_PORT } from '../testing/http.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { CharmsError, httpStatus } from '../errors.js';
import { CborReader, CborWriter, encodeCbor } from '../codec/cbor.js';
import { Tagged, ValueMap } from '../codec/value.js';
import { concatBytes, equalBytes, fromHex, toHex } from '../util/bytes.js';
import { cardanoTxHash, parseCardanoTx } from '../cardano/tx.js';
import { SCROLLS_VKEY_HEX } from '../cardano/scripts-data.js';
import { scrollOutputsMessage } from '../bitcoin/scrolls.js';
import { utxoIdFromString } from '../model/primitives.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';
import { candidAddressesResult, candidTextResult, startFakeIc, type FakeIc, type FakeIcOptions } from '../testing/ic-fake.js';
import { checkScrollsWitness } from './cardano-witness.js';
import { ScrollsClient, type ScrollsClientOptions } from './client.js';
import { SCROLLS_DEFAULTS, scrollsSettings } from '../settings/scrolls.js';
import { errorResponse } from '../infra/http.js';
import { silentLogger } from '../infra/log.js';

const CARDANO = SCROLLS_DEFAULTS.cardanoCanisterId;
const BITCOIN = SCROLLS_DEFAULTS.bitcoinCanisterId;

/** A transaction with its witness set replaced (body and tail bytes kept as they are). */
function withWitnessSet(tx: Uint8Array, edit: (ws: ValueMap) => ValueMap): Uint8Array {
  const r = new CborReader(tx);
  r.head();
  const b0 = r.pos;
  r.value();
  const body = tx.slice(b0, r.pos);
  r.value();
  const tail = tx.slice(r.pos);
  const w = new CborWriter();
  w.arrayHeader(4);
  return concatBytes(w.finish(), body, encodeCbor(edit(parseCardanoTx(tx).witnessSet)), tail);
}

const vkeysOf = (ws: ValueMap): unknown[] => {
  const v = ws.entries.find(([k]) => k === 0n)?.[1];
  const list = v instanceof Tagged ? v.value : v;
  return Array.isArray(list) ? list : [];
};

/** What the canister's `sign` does: append a vkey witness over the body hash. */
function appendWitness(tx: Uint8Array, secret: Uint8Array): Uint8Array {
  const sig = ed25519.sign(cardanoTxHash(parseCardanoTx(tx)), secret);
  return withWitnessSet(tx, (ws) => {
    const others = ws.entries.filter(([k]) => k !== 0n);
    return new ValueMap([[0n, new Tagged(258n, [...vkeysOf(ws), [ed25519.getPublicKey(secret), sig]] as never)], ...others]);
  });
}

/** The real mainnet Charms tx without its Scrolls witness: what the builder hands to `sign`. */
function unsignedRealTx(): { unsigned: Uint8Array; signed: Uint8Array } {
  const v = readSharedJson('vectors', 'cardano-finality-tx-decoded.json');
  const signed = fromHex(v.tx_hex);
  const scrolls = fromHex(SCROLLS_VKEY_HEX);
  const unsigned = withWitnessSet(signed, (ws) => {
    const kept = vkeysOf(ws).filter((w) => !equalBytes((w as Uint8Array[])[0]!, scrolls));
    return new ValueMap(ws.entries.map(([k, x]) => (k === 0n ? [k, new Tagged(258n, kept as never)] : [k, x])));
  });
  return { unsigned, signed };
}

async function withFake(opts: FakeIcOptions, run: (fake: FakeIc, client: (o?: ScrollsClientOptions) => ScrollsClient) => Promise<void>) {
  const fake = await startFakeIc(opts);
  try {
    await run(fake, (o = {}) => new ScrollsClient({ host: fake.url, rootKey: fake.rootKey, retryTimes: 0, ...o }));
  } finally {
    await fake.close();
  }
}

async function rejects(p: Promise<unknown>, code: string, re: RegExp, status: number): Promise<CharmsError> {
  const e = await p.then(
    () => assert.fail('expected a CharmsError'),
    (x: unknown) => x,
  );
  assert.ok(e instanceof CharmsError, String(e));
  assert.equal(e.code, code, e.message);
  assert.match(e.message, re);
  assert.equal(httpStatus(e), status);
  return e;
}

test('the real Scrolls witness of a mainnet tx verifies with the protocol key; the witness check refuses tampering', (t) => {
  if (!sharedOrSkip(t)) return;
  const { unsigned, signed } = unsignedRealTx();
  assert.ok(!equalBytes(unsigned, signed));
  checkScrollsWitness(unsigned, signed, fromHex(SCROLLS_VKEY_HEX));
  // another key's witness is not the Scrolls witness
  const other = ed25519.utils.randomSecretKey();
  assert.throws(() => checkScrollsWitness(unsigned, appendWitness(unsigned, other), fromHex(SCROLLS_VKEY_HEX)), /no vkey witness of the Scrolls key/);
  // a witness set that drops a witness we sent, or a changed body, is refused
  assert.throws(() => checkScrollsWitness(signed, unsigned, fromHex(SCROLLS_VKEY_HEX)), /was dropped|no vkey witness/);
  const bodyFlip = Uint8Array.from(signed);
  bodyFlip[10]! ^= 1;
  assert.throws(() => checkScrollsWitness(unsigned, bodyFlip, fromHex(SCROLLS_VKEY_HEX)), /body changed|not a Cardano transaction/);
});

test('sign over the IC HTTP interface: certified answer, body untouched, witness verified, request as the candid interface says', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { unsigned } = unsignedRealTx();
  const key = ed25519.utils.randomSecretKey();
  for (const api of ['v4', 'v2'] as const) {
    await withFake(
      { api, canisters: { [CARDANO]: { sign: ([hex]) => ({ reply: candidTextResult({ Ok: toHex(appendWitness(fromHex(hex as string), key)) }) }) } } },
      async (fake, client) => {
        const signed = await client({ keys: { cardanoVkey: ed25519.getPublicKey(key) } }).signCardanoTx(unsigned);
        assert.deepEqual(parseCardanoTx(signed).bodyBytes, parseCardanoTx(unsigned).bodyBytes);
        assert.equal(vkeysOf(parseCardanoTx(signed).witnessSet).length, vkeysOf(parseCardanoTx(unsigned).witnessSet).length + 1);
        assert.deepEqual(fake.refused, []);
        assert.equal(fake.calls.length, 1);
        const c = fake.calls[0]!;
        assert.equal(c.canisterId, CARDANO);
        assert.equal(c.methodName, 'sign');
        assert.deepEqual(c.args, [toHex(unsigned)]);
        assert.deepEqual(c.sender, Uint8Array.of(4), 'anonymous caller');
        assert.match(c.path, api === 'v4' ? /^\/api\/v4\/canister\/.+\/call$/ : /^\/api\/v2\/canister\/.+\/call$/);
        assert.equal(fake.readStates > 0, api === 'v2', 'the async call is answered through read_state');
      },
    );
  }
});

test('sign: canister errors keep the canister message (Input error → 400 SCROLLS_REFUSED, others → 502); rejects and forged certificates are 502', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { unsigned } = unsignedRealTx();
  const mockRefusal = 'Input error: extracting and verifying spell: mock spells are not accepted';
  await withFake(
    {
      canisters: {
        [CARDANO]: {
          sign: () => ({ reply: candidTextResult({ Err: mockRefusal }) }),
          certify_final: () => ({ reply: candidTextResult({ Err: 'System error: signing tx hash: key_1 unavailable' }) }),
        },
      },
    },
    async (_fake, client) => {
      const e = await rejects(
        client().signCardanoTx(unsigned),
        'SCROLLS_REFUSED',
        /refused sign: Input error: extracting and verifying spell: mock spells/,
        400,
      );
      assert.ok(e.message.includes(mockRefusal));
      await rejects(client().certifyCardanoFinal(unsigned), 'UPSTREAM_FAILED', /failed certify_final: System error: signing tx hash: key_1 unavailable/, 502);
      // a canister id the replica does not host: the call is rejected
      await rejects(client({ cardanoCanisterId: BITCOIN }).signCardanoTx(unsigned), 'UPSTREAM_FAILED', /rejected sign: .*not found/s, 502);
    },
  );
  // a trapping canister
  await withFake({ canisters: { [CARDANO]: { sign: () => ({ reject: { code: 5, message: 'Canister trapped: out of cycles' } }) } } }, async (_f, client) => {
    await rejects(client().signCardanoTx(unsigned), 'UPSTREAM_FAILED', /rejected sign: .*out of cycles/s, 502);
  });
  // an answer whose certificate is signed by another key than the root key is never used
  const key = ed25519.utils.randomSecretKey();
  await withFake(
    {
      forgeWithOtherKey: true,
      canisters: { [CARDANO]: { sign: ([hex]) => ({ reply: candidTextResult({ Ok: toHex(appendWitness(fromHex(hex as string), key)) }) }) } },
    },
    async (_f, client) => {
      await rejects(
        client({ keys: { cardanoVkey: ed25519.getPublicKey(key) } }).signCardanoTx(unsigned),
        'UPSTREAM_FAILED',
        /certificate that does not verify/,
        502,
      );
    },
  );
  // a canister that signs with another key than the Scrolls key is refused (body changes: see the witness test)
  await withFake(
    {
      canisters: {
        [CARDANO]: {
          sign: ([hex]) => {
            const tx = fromHex(hex as string);
            return { reply: candidTextResult({ Ok: toHex(appendWitness(tx, key)) }) };
          },
        },
      },
    },
    async (_f, client) => {
      await rejects(client().signCardanoTx(unsigned), 'UPSTREAM_FAILED', /no vkey witness of the Scrolls key/, 502);
    },
  );
});

test('unreachable host: 503 UPSTREAM_UNAVAILABLE naming the host, nothing built', async (t) => {
  const port = REFUSED_PORT;
  const client = new ScrollsClient({ host: `http://127.0.0.1:${port}`, retryTimes: 1 });
  const tx = Uint8Array.of(0x84, 0xa0, 0xa0, 0xf5, 0xf6);
  await rejects(client.signCardanoTx(tx), 'UPSTREAM_UNAVAILABLE', new RegExp(`Scrolls canister ${CARDANO} at http://127.0.0.1:${port}/? is unreachable`), 503);
  await rejects(client.bitcoinScrollOutputs(utxoIdFromString(`${'11'.repeat(32)}:0`), [1]), 'UPSTREAM_UNAVAILABLE', /is unreachable/, 503);
  t.diagnostic('unreachable → UPSTREAM_UNAVAILABLE (HTTP 503, retry later)');
});

test('response bodies are capped: a reply over the limit is never buffered whole (declared or streamed)', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { unsigned } = unsignedRealTx();
  const key = ed25519.utils.randomSecretKey();
  await withFake(
    { canisters: { [CARDANO]: { sign: ([hex]) => ({ reply: candidTextResult({ Ok: toHex(appendWitness(fromHex(hex as string), key)) }) }) } } },
    async (fake, client) => {
      await rejects(
        client({ keys: { cardanoVkey: ed25519.getPublicKey(key) }, maxResponseBytes: 1024 }).signCardanoTx(unsigned),
        'UPSTREAM_FAILED',
        /answered sign with too much data: .*exceeds 1024/,
        502,
      );
      assert.equal(fake.calls.length, 1);
    },
  );
  // a host streaming an endless body without a length
  const { createServer: http } = await import('node:http');
  const server = http((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/cbor' });
    const chunk = Buffer.alloc(64 * 1024);
    let sent = 0;
    const pump = () => {
      while (sent < 64 && res.write(chunk)) sent++;
      if (sent < 64) res.once('drain', pump);
      else res.end();
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = (server.address() as { port: number }).port;
    const client = new ScrollsClient({ host: `http://127.0.0.1:${port}`, retryTimes: 0, maxResponseBytes: 1024 * 1024 });
    await rejects(client.signCardanoTx(unsigned), 'UPSTREAM_FAILED', /too much data: response exceeds 1048576 bytes/, 502);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('certify_final: the finality signature is checked against the finality key', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { signed } = unsignedRealTx();
  const key = ed25519.utils.randomSecretKey();
  const sign = (tx: Uint8Array) => toHex(ed25519.sign(cardanoTxHash(parseCardanoTx(tx)), key));
  await withFake(
    { canisters: { [CARDANO]: { certify_final: ([hex]) => ({ reply: candidTextResult({ Ok: sign(fromHex(hex as string)) }) }) } } },
    async (fake, client) => {
      const sig = await client({ keys: { finalityVkey: ed25519.getPublicKey(key) } }).certifyCardanoFinal(signed);
      assert.equal(sig.length, 64);
      assert.deepEqual(fake.calls[0]!.args, [toHex(signed)]);
      // with the protocol's finality key the fake's signature is refused
      await rejects(client().certifyCardanoFinal(signed), 'UPSTREAM_FAILED', /finality signature was refused/, 502);
    },
  );
});

test('Bitcoin addresses: signed scriptPubKeys verified (BIP-340 over SHA-256 of the CBOR map); request is (text "txid:vout", vec nat32)', async () => {
  const secret = schnorr.utils.randomSecretKey();
  const pub = schnorr.getPublicKey(secret);
  const spk = (anchor: string, i: number) => `0014${toHex(sha256(new TextEncoder().encode(`${anchor}/${i}`)).slice(0, 20))}`;
  let tamper = false;
  const opts: FakeIcOptions = {
    canisters: {
      [BITCOIN]: {
        addresses: ([anchor, outIs]) => {
          const map = new Map((outIs as number[]).map((i) => [i, spk(anchor as string, i)]));
          const signature = toHex(schnorr.sign(sha256(scrollOutputsMessage(map)), secret));
          if (tamper) map.set((outIs as number[])[0]!, spk('other', 0));
          return { reply: candidAddressesResult({ Ok: { signature, scriptPubkeys: [...map] } }) };
        },
      },
    },
  };
  const txIn0 = `${'ab'.repeat(32)}:7`;
  await withFake(opts, async (fake, client) => {
    const signed = await client({ keys: { bitcoinAddrsPubkey: pub } }).bitcoinScrollOutputs(utxoIdFromString(txIn0), [3, 1, 3]);
    assert.deepEqual([...signed.scriptPubkeys.keys()], [1, 3]);
    assert.equal(signed.scriptPubkeys.get(1), spk(txIn0, 1));
    assert.deepEqual(fake.calls[0]!.args, [txIn0, [1, 3]]);
    assert.equal(fake.calls[0]!.methodName, 'addresses');
    assert.equal(fake.calls[0]!.canisterId, BITCOIN);
    // the protocol key does not verify the fake's signature; a tampered map does not verify either
    await rejects(
      client().bitcoinScrollOutputs(utxoIdFromString(txIn0), [1]),
      'UPSTREAM_FAILED',
      /scriptPubKeys were refused: the Scrolls signature .* does not verify/,
      502,
    );
    tamper = true;
    await rejects(client({ keys: { bitcoinAddrsPubkey: pub } }).bitcoinScrollOutputs(utxoIdFromString(txIn0), [1]), 'UPSTREAM_FAILED', /does not verify/, 502);
  });
  await withFake(
    { canisters: { [BITCOIN]: { addresses: () => ({ reply: candidAddressesResult({ Err: 'Input error: too many output indexes requested (max: 256)' }) }) } } },
    async (_f, client) => {
      await rejects(
        client().bitcoinScrollOutputs(utxoIdFromString(txIn0), [1]),
        'SCROLLS_REFUSED',
        /refused addresses: Input error: too many output indexes/,
        400,
      );
    },
  );
});

test('settings: defaults are the protocol canisters on ic0.app; environment overrides are validated', () => {
  assert.deepEqual(scrollsSettings({}), {
    host: 'https://ic0.app',
    cardanoCanisterId: 'tty7k-waaaa-aaaak-qvngq-cai',
    bitcoinCanisterId: 'rpgc6-oqaaa-aaaak-qy3uq-cai',
  });
  const s = scrollsSettings({ SCROLLS_HOST: 'http://127.0.0.1:4943', SCROLLS_CARDANO_CANISTER_ID: 'aaaaa-aa', SCROLLS_ROOT_KEY: 'abcd' });
  assert.equal(s.host, 'http://127.0.0.1:4943');
  assert.equal(s.cardanoCanisterId, 'aaaaa-aa');
  assert.deepEqual(s.rootKey, Uint8Array.of(0xab, 0xcd));
  assert.throws(
    () => scrollsSettings({ SCROLLS_BITCOIN_CANISTER_ID: 'not-a-canister' }),
    (e: CharmsError) => e.code === 'CONFIG' && /SCROLLS_BITCOIN_CANISTER_ID is not a canister id/.test(e.message),
  );
  assert.throws(() => scrollsSettings({ SCROLLS_HOST: 'ftp://x' }), /must be an http\(s\) URL/);
  assert.throws(() => scrollsSettings({ SCROLLS_ROOT_KEY: 'zz' }), /DER root key in hex/);
});

test('a hostile replica: answers of impossible shape are refused before any decoding, and clients see one line of ours', async () => {
  const big = new Uint8Array(8 * 1024 * 1024 - 64);
  big.set([0x9a, 0xff, 0xff, 0xff, 0xff]); // an array of 2^32−1 items
  const secret = new TextEncoder().encode('<html>INTERNAL replica page secret=hunter2</html>');
  const answers: [string, Uint8Array, RegExp][] = [
    ['2^32−1 array', big, /answered sign with an answer that is not the shape of an IC answer: .*length 4294967295 exceeds the input/],
    [
      '2^32−1 array in the certificate',
      encodeCbor(ValueMap.of({ status: 'replied', certificate: big })),
      /not the shape of an IC answer: .*length 4294967295 exceeds/,
    ],
    ['not CBOR', secret, /not the shape of an IC answer/],
    [
      'CBOR of the wrong shape',
      encodeCbor(ValueMap.of({ status: 'replied', certificate: encodeCbor(ValueMap.of({ tree: 'hunter2', signature: 'INTERNAL' })) })),
      /failed sign: its answer could not be used \(details in the server log\)/,
    ],
  ];
  for (const [what, body, re] of answers) {
    const fake = await startFakeIc({ canisters: {}, rawAnswer: () => body });
    try {
      const client = new ScrollsClient({ host: fake.url, rootKey: fake.rootKey, retryTimes: 0 });
      const e = await rejects(client.signCardanoTx(Uint8Array.of(0x84, 0xa0, 0xa0, 0xf5, 0xf6)), 'UPSTREAM_FAILED', re, 502);
      const res = errorResponse(e, silentLogger);
      const text = String(res.body);
      assert.equal(res.status, 502, what);
      assert.ok(!/\n|\bat \w+ \(|node_modules|file:\/\/|\/work\/|hunter2|INTERNAL/.test(text), `${what}: ${text}`);
      assert.ok(!/\n|node_modules|file:\/\//.test(e.message), `${what}: ${e.message}`);
    } finally {
      await fake.close();
    }
  }
});
