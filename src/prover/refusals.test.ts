/**
 * Every refusal the reference's prover makes in `validate_prove_request` (src/spell/validate.rs)
 * and the `is_correct` it calls, one change at a time from a valid request, through a real server:
 * our status and the first sentence of our message. Clients match on these sentences (the Charms
 * wallet stops retrying on "binaries must contain exactly" and "Required VKs:"), so ours start with
 * the reference's, in the reference's order.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { sha256 } from '@noble/hashes/sha2.js';
import { startProveServer } from '../prove-server/server.js';
import { bodyHandler, LocalProveService } from './service.js';
import { MockBackend, UnavailableBackend } from './backend.js';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { funding } from '../testing/fixtures.js';
import { h1 } from '../testing/http.js';
import { fromHex, utf8 } from '../util/bytes.js';
import { ValueMap } from '../codec/value.js';
import { toJsonCompact } from '../codec/json.js';
import { appFromString, utxoIdFromString, type App, type Data } from '../model/primitives.js';
import type { NormalizedSpell } from '../model/spell.js';
import { bareSpellInputs, proveRequestToValue, type ProveRequest } from '../model/request.js';
import { shutdownRunner } from '../runner/index.js';
import { loadSettings } from '../settings/settings.js';

after(() => shutdownRunner());

const V12 = '283559062cb6b651eb4a5f557ba4f67efa9aae55ba2278d4f10f35cbefaa84a5'; // outs 0, 3: BRO 116e9 and 942e8
const BRO = appFromString(
  't/3d7fe7e4cea6121947af73d70e5119bebd8aa5b7edfe74bfaf6e779a1847bd9b/c975d4e0c292fb95efbda5c13312d6ac1d8b5aeff7f0f1e5578645a2da70ff5f',
);
const DEST = fromHex('00144f01bcd75f71938618c6d617ace82114542cbb76');
const WASM = utf8('\0asm some app binary');
const WASM_HASH = sha256(WASM);
const NFT: App = { tag: 'n', identity: sha256(utf8('an nft')), vk: sha256(utf8('a versioned app key')) };

/** The valid base: a BRO transfer of both V12 charms, funded by the build vectors' funding output. */
function base(fundingTxid: string): NormalizedSpell {
  return {
    version: 15,
    tx: {
      ins: [`${V12}:0`, `${V12}:3`, `${fundingTxid}:0`].map((u) => utxoIdFromString(u)),
      outs: [new Map<number, Data>([[0, 105800000000n]])],
      coins: [{ amount: 1000n, dest: DEST }],
    },
    app_public_inputs: [[BRO, null]],
    versioned_apps: [],
    mock: false,
  };
}

test('each reference refusal of the prove path: our status and first sentence, in the reference order', async (t) => {
  if (!sharedOrSkip(t)) return;
  const f = funding(readSharedText);
  const v12 = readSharedText('vectors', 'chain', `${V12}.bitcoin.hex`).trim();
  const request = (spell: NormalizedSpell, more: Partial<ProveRequest> = {}): ProveRequest => ({
    ...bareSpellInputs(
      spell,
      [
        { chain: 'bitcoin', hex: v12 },
        { chain: 'bitcoin', hex: f.hex },
      ],
      'bitcoin',
    ),
    change_address: f.changeAddress,
    fee_rate: 2,
    ...more,
  });
  const ok = base(f.txid);
  const edit = (fn: (s: NormalizedSpell) => void): NormalizedSpell => {
    const s: NormalizedSpell = structuredClone(ok);
    fn(s);
    return s;
  };
  const mintNft = edit((s) => {
    s.app_public_inputs = [
      [NFT, null],
      [BRO, null],
    ]; // in App order
    s.tx.outs = [
      new Map<number, Data>([
        [0, 'minted'],
        [1, 105800000000n],
      ]),
    ];
    s.versioned_apps = [[NFT.vk, { version: 1, wasm_hash: WASM_HASH }]];
  });
  const cases: [string, ProveRequest, string][] = [
    ['coins missing', request(edit((s) => delete s.tx.coins)), 'coins must be present'],
    ['coins length', request(edit((s) => s.tx.outs.push(new Map()))), 'coins length (1) must match outs length (2)'],
    ['coin content on Bitcoin', request(edit((s) => (s.tx.coins![0]!.content = new ValueMap()))), 'coins[0].content must be None for Bitcoin'],
    ['prev tx missing', { ...request(ok), prev_txs: [{ chain: 'bitcoin', hex: f.hex }] }, 'prev_txs MUST contain transactions creating input UTXOs'],
    ['extra prev tx', request(edit((s) => s.tx.ins!.pop())), 'prev_txs must contain exactly the transactions producing spell inputs and beaming sources.'],
    ['duplicate input', request(edit((s) => s.tx.ins!.push(s.tx.ins![0]!))), `spell.tx.ins contains duplicate UTXO: ${V12}:0`],
    ['over-transfer, no binaries', request(edit((s) => s.tx.outs[0]!.set(0, 105800000001n))), 'binaries must contain exactly the required app binaries.'],
    ['non-integer amount, no binaries', request(edit((s) => s.tx.outs[0]!.set(0, 1.5))), 'binaries must contain exactly the required app binaries.'],
    [
      'over-transfer, another binary',
      request(
        edit((s) => s.tx.outs[0]!.set(0, 1n << 40n)),
        { binaries: [[WASM_HASH, WASM]] },
      ),
      'binaries must contain exactly the required app binaries.',
    ],
    ['orphan versioned app', request(edit((s) => (s.versioned_apps = [[NFT.vk, { version: 1, wasm_hash: WASM_HASH }]]))), 'versioned_apps contains unused vk:'],
    [
      'versioned app unsigned',
      request(mintNft, { binaries: [[WASM_HASH, WASM]] }),
      'app_signatures must contain exactly one entry per non-simple-transfer versioned app referenced in the spell.',
    ],
    ['not well formed', request(edit((s) => (s.version = 14))), 'Condition failed: `well_formed(spell, &prev_spells, tx_ins_beamed_source_utxos)`'],
    [
      'zero amount',
      request(edit((s) => s.tx.outs.push(new Map([[0, 0n]])) && s.tx.coins!.push({ amount: 1000n, dest: DEST }))),
      'Condition failed: `well_formed(spell, &prev_spells, tx_ins_beamed_source_utxos)`',
    ],
    [
      'input app not listed',
      request(edit((s) => ((s.app_public_inputs = []), (s.tx.outs = [new Map()])))),
      `input #0 (${V12}:0) carries a charm for app ${'t/3d7fe7e4cea6121947af73d70e5119bebd8aa5b7edfe74bfaf6e779a1847bd9b/c975d4e0c292fb95efbda5c13312d6ac1d8b5aeff7f0f1e5578645a2da70ff5f'}, but the spending spell does not list it in \`app_public_inputs\`.`,
    ],
    ['output script for no network', request(edit((s) => (s.tx.coins![0]!.dest = Uint8Array.of(0x51)))), 'all output addresses must be valid for the network'],
    ['insufficient funds', request(ok, { fee_rate: 500 }), 'spell inputs must have sufficient value to cover outputs and fees'],
  ];
  const service = new LocalProveService({ backend: new MockBackend() });
  const server = await startProveServer({ host: '127.0.0.1', port: 0, prove: bodyHandler(service), ready: () => service.ready() });
  const real = new LocalProveService({ backend: new UnavailableBackend('no prover configured (test)', loadSettings({}).prover) });
  const realServer = await startProveServer({ host: '127.0.0.1', port: 0, prove: bodyHandler(real), ready: () => real.ready() });
  const post = async (port: number, req: ProveRequest) => {
    const r = await h1(port, 'POST', '/spells/prove', toJsonCompact(proveRequestToValue(req, true)), { 'content-type': 'application/json' });
    return { status: r.status, body: r.body.toString() };
  };
  try {
    // the base request is valid: each case below changes one thing
    const good = await post(server.port, request(ok));
    assert.equal(good.status, 200, good.body);
    for (const [name, req, sentence] of cases) {
      const r = await post(server.port, req);
      assert.equal(r.status, 400, `${name}: ${r.body}`);
      const error = JSON.parse(r.body).error as string;
      assert.ok(error.startsWith(sentence), `${name}: expected the reference's "${sentence}", got "${error}"`);
    }
    // the mock check comes first on a prover that is not a mock one
    const r = await post(realServer.port, request({ ...ok, mock: true }));
    assert.equal(r.status, 400, r.body);
    assert.ok((JSON.parse(r.body).error as string).startsWith('cannot prove a mock==true spell on a mock==false prover'), r.body);
  } finally {
    await server.close();
    await realServer.close();
  }
});
