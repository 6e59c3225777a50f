import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { startProveServer } from '../prove-server/server.js';
import { bodyHandler, LocalProveService } from './service.js';
import { MockBackend, type ProofBackend } from './backend.js';
import { proveMock } from '../groth16/mock.js';
import { refuseUnboundScrollOutputs } from './prove.js';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { funding } from '../testing/fixtures.js';
import { h1, REFUSED_PORT } from '../testing/http.js';
import { candidAddressesResult, startFakeIc, type FakeIc } from '../testing/ic-fake.js';
import { parseSpellText } from '../model/inputs.js';
import { encodeSpellCbor } from '../model/spell.js';
import { parseTx } from '../bitcoin/tx.js';
import { scrollOutputsMessage } from '../bitcoin/scrolls.js';
import { fromHex, toHex } from '../util/bytes.js';
import { ScrollsClient } from '../scrolls/client.js';
import { SCROLLS_DEFAULTS } from '../settings/scrolls.js';
import { shutdownRunner } from '../runner/index.js';

after(() => shutdownRunner());

/**
 * A non-mock backend for exercising the real-prover path without SP1: it returns the mock
 * circuit's proof, which no real verifier accepts. Test-only; these tests look at the outputs'
 * scripts, never at the proof.
 */
class UnverifiableTestBackend implements ProofBackend {
  readonly name = 'test: non-mock path, proof not valid for real spells';
  readonly mock = false;
  async ready() {
    return true;
  }
  async prove(pv: Uint8Array) {
    return proveMock(pv);
  }
}

const secret = schnorr.utils.randomSecretKey();
/** What the Scrolls Bitcoin canister answers: a P2WPKH script per output, derived from the anchor, signed. */
const scriptFor = (anchor: string, i: number) => `0014${toHex(sha256(new TextEncoder().encode(`${anchor}/${i}`)).slice(0, 20))}`;

function request(f: ReturnType<typeof funding>, scrolls: number[], dests: string[]): string {
  const coins = dests.map((d) => `{"amount":1000,"dest":"${d}"}`).join(',');
  const outs = dests.map(() => '{}').join(',');
  return JSON.stringify({
    spell: toHex(
      encodeSpellCbor(
        parseSpellText(
          `{"version":15,"tx":{"ins":["${f.txid}:0"],"outs":[${outs}],"coins":[${coins}],"scrolls":[${scrolls.join(',')}]},"app_public_inputs":{}}`,
        ),
      ),
    ),
    prev_txs: [{ bitcoin: f.hex }],
    change_address: f.changeAddress,
    fee_rate: 2.0,
    chain: 'bitcoin',
  });
}

async function withServer(scrolls: ScrollsClient | undefined, run: (port: number) => Promise<void>, backend: ProofBackend = new UnverifiableTestBackend()) {
  const service = new LocalProveService({ backend, ...(scrolls ? { scrolls } : {}) });
  const server = await startProveServer({ host: '127.0.0.1', port: 0, prove: bodyHandler(service), ready: () => service.ready() });
  try {
    await run(server.port);
  } finally {
    await server.close();
  }
}

async function fakeCanister(behave: 'ok' | 'refuse' | 'bad-signature'): Promise<FakeIc> {
  return startFakeIc({
    canisters: {
      [SCROLLS_DEFAULTS.bitcoinCanisterId]: {
        addresses: ([anchor, outIs]) => {
          if (behave === 'refuse') return { reply: candidAddressesResult({ Err: 'Input error: invalid tx_in_0: bad' }) };
          const map = new Map((outIs as number[]).map((i) => [i, scriptFor(anchor as string, i)]));
          const sig = schnorr.sign(sha256(scrollOutputsMessage(map)), secret);
          if (behave === 'bad-signature') sig[0]! ^= 1;
          return { reply: candidAddressesResult({ Ok: { signature: toHex(sig), scriptPubkeys: [...map] } }) };
        },
      },
    },
  });
}

const clientFor = (fake: FakeIc) =>
  new ScrollsClient({ host: fake.url, rootKey: fake.rootKey, retryTimes: 0, keys: { bitcoinAddrsPubkey: schnorr.getPublicKey(secret) } });

test("a real prover binds Scrolls outputs to the canister's signed scripts before building; given dests are replaced; no empty script", async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = funding(readSharedText);
  const fake = await fakeCanister('ok');
  try {
    await withServer(clientFor(fake), async (port) => {
      const r = await h1(port, 'POST', '/spells/prove', request(f, [1, 2], [f.dest, '', f.dest]), { 'content-type': 'application/json' });
      assert.equal(r.status, 200, r.body.toString());
      const tx = parseTx(fromHex(JSON.parse(r.body.toString())[0].bitcoin));
      const anchor = `${f.txid}:0`;
      assert.equal(toHex(tx.outputs[0]!.script), f.dest);
      assert.equal(toHex(tx.outputs[1]!.script), scriptFor(anchor, 1));
      assert.equal(toHex(tx.outputs[2]!.script), scriptFor(anchor, 2), 'a dest the client gave is replaced by the signed script');
      assert.ok(
        tx.outputs.every((o) => o.script.length > 0),
        'no output without a script',
      );
      assert.deepEqual(
        fake.calls.map((c) => [c.methodName, c.args]),
        [['addresses', [anchor, [1, 2]]]],
      );
      assert.deepEqual(fake.refused, []);
    });
  } finally {
    await fake.close();
  }
});

test('a real prover refuses when the canister refuses (400), answers a bad signature (502) or is unreachable (503): nothing built', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = funding(readSharedText);
  const body = request(f, [1], [f.dest, '']);
  for (const [behave, status, code, re] of [
    ['refuse', 400, 'SCROLLS_REFUSED', /refused addresses: Input error: invalid tx_in_0/],
    ['bad-signature', 502, 'UPSTREAM_FAILED', /Scrolls signature over the scriptPubKey map does not verify/],
  ] as const) {
    const fake = await fakeCanister(behave);
    try {
      await withServer(clientFor(fake), async (port) => {
        const r = await h1(port, 'POST', '/spells/prove', body, { 'content-type': 'application/json' });
        assert.equal(r.status, status, r.body.toString());
        assert.equal(JSON.parse(r.body.toString()).code, code);
        assert.match(JSON.parse(r.body.toString()).error, re);
      });
    } finally {
      await fake.close();
    }
  }
  await withServer(new ScrollsClient({ host: `http://127.0.0.1:${REFUSED_PORT}`, retryTimes: 0 }), async (p) => {
    const r = await h1(p, 'POST', '/spells/prove', body, { 'content-type': 'application/json' });
    assert.equal(r.status, 503, r.body.toString());
    assert.equal(JSON.parse(r.body.toString()).code, 'UPSTREAM_UNAVAILABLE');
    assert.match(JSON.parse(r.body.toString()).error, /Scrolls canister rpgc6-oqaaa-aaaak-qy3uq-cai at .* is unreachable/);
  });
  // a real prover without a Scrolls client refuses too
  await withServer(undefined, async (p) => {
    const r = await h1(p, 'POST', '/spells/prove', body, { 'content-type': 'application/json' });
    assert.equal(r.status, 500);
    assert.equal(JSON.parse(r.body.toString()).code, 'CONFIG');
  });
});

test('mock mode never calls the canister: a Scrolls spell is refused even with a reachable canister', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = funding(readSharedText);
  const fake = await fakeCanister('ok');
  try {
    await withServer(
      clientFor(fake),
      async (port) => {
        const r = await h1(port, 'POST', '/spells/prove', request(f, [1], [f.dest, '']), { 'content-type': 'application/json' });
        assert.equal(r.status, 400);
        assert.equal(JSON.parse(r.body.toString()).code, 'UNSUPPORTED');
        assert.match(JSON.parse(r.body.toString()).error, /mock mode cannot bind Scrolls outputs/);
        assert.equal(fake.calls.length, 0);
      },
      new MockBackend(),
    );
  } finally {
    await fake.close();
  }
});

test('the last guard before building refuses any Scrolls output with an empty dest', () => {
  const spell = parseSpellText(
    '{"version":15,"tx":{"ins":[],"outs":[{},{}],"coins":[{"amount":1000,"dest":"0014aa"},{"amount":1000,"dest":""}],"scrolls":[1]},"app_public_inputs":{}}',
  );
  assert.throws(() => refuseUnboundScrollOutputs(spell), /Scrolls output\(s\) #1 have an empty dest: an empty script would let anyone spend the output/);
});
