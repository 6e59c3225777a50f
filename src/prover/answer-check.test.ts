/**
 * A remote prover's answer is checked against the request before anyone signs it (issue 24 item
 * 8): the library function on tampered answers, and `charms spell prove` against a hostile
 * proving service that answers a transaction paying someone else.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';
import { bitcoinProveRequest, funding } from '../testing/fixtures.js';
import { proveSpellTx } from './prove.js';
import { MockBackend } from './backend.js';
import { checkProverAnswer, describeAnswer } from './answer-check.js';
import { parseTx, serializeTx } from '../bitcoin/tx.js';
import { opReturnSpellPayload, opReturnSpellScript } from './../bitcoin/spell-location.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { encodeProveResponse } from './service.js';
import { charmsBin } from '../testing/cli.js';
import { shutdownRunner } from '../runner/index.js';
import type { ChainTx } from '../model/request.js';

after(() => shutdownRunner());

const ATTACKER = fromHex(`5120${'ee'.repeat(32)}`);
const refused = (re: RegExp) => (e: unknown) => e instanceof CharmsError && e.code === 'PROVER_ANSWER_INVALID' && re.test(e.message);

async function honest() {
  const f = funding(readSharedText);
  const yaml = `version: 15\ntx:\n  ins: [${f.txid}:0]\n  outs: [{}]\n  coins: [{amount: 1000, dest: ${f.dest}}]\napp_public_inputs: {}\n`;
  const req = bitcoinProveRequest(f, yaml, [f.hex]);
  const { txs } = await proveSpellTx(req, { backend: new MockBackend() });
  return { f, yaml, req, txs };
}

const tamper = (txs: ChainTx[], edit: (tx: ReturnType<typeof parseTx>) => void): ChainTx[] => {
  const tx = parseTx(fromHex(txs[0]!.hex));
  edit(tx);
  return [{ chain: 'bitcoin', hex: toHex(serializeTx(tx)) }];
};

test('an honest answer passes and says what it pays beyond the requested outputs', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { req, txs } = await honest();
  const c = checkProverAnswer(req, txs, { mock: true });
  assert.equal(c.chain, 'bitcoin');
  assert.equal(c.proverFee, 0n, 'no fee settings: the prover keeps nothing');
  assert.ok(c.networkFee > 0n && c.networkFee < 5000n, String(c.networkFee));
  assert.equal(c.change, 50_000n - 1000n - c.networkFee);
  assert.match(describeAnswer(c), /0 sats to the prover and protocol \(0 output\(s\)\), \d+ sats network fee and \d+ sats change/);
  // a mock proof is not accepted as a real one
  assert.throws(() => checkProverAnswer(req, txs), refused(/does not verify/));
});

test('tampered answers are refused: inputs, output amount or script, missing output, spell, several txs', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { req, txs } = await honest();
  const cases: [string, ChainTx[], RegExp][] = [
    ['another input', tamper(txs, (tx) => (tx.inputs[0]!.vout = 1)), /spends .*:1 instead of .*:0/],
    ['an extra input', tamper(txs, (tx) => tx.inputs.push({ ...tx.inputs[0]!, vout: 1 })), /spends/],
    ['a smaller output', tamper(txs, (tx) => (tx.outputs[0]!.value = 999n)), /output #0 holds 999 sats instead of 1000/],
    ['another script', tamper(txs, (tx) => (tx.outputs[0]!.script = ATTACKER)), /output #0 pays 5120ee/],
    ['no outputs but the spell', tamper(txs, (tx) => tx.outputs.splice(0, 1)), /./],
    [
      'another spell (its proof no longer verifies)',
      tamper(txs, (tx) => {
        const i = tx.outputs.findIndex((o) => o.script[0] === 0x6a);
        const payload = Uint8Array.from(opReturnSpellPayload(tx));
        payload[payload.length - 40]! ^= 1;
        tx.outputs[i]!.script = opReturnSpellScript(payload);
      }),
      /does not verify/,
    ],
    ['two transactions', [...txs, ...txs], /expected one transaction, got 2/],
    ['a Cardano answer', [{ chain: 'cardano', hex: txs[0]!.hex }], /a cardano transaction for a bitcoin spell/],
  ];
  for (const [what, answer, re] of cases) assert.throws(() => checkProverAnswer(req, answer, { mock: true }), refused(re), what);
});

test('change redirected to an attacker is reported as what the prover kept', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { req, txs } = await honest();
  const stolen = tamper(txs, (tx) => {
    const change = tx.outputs.at(-1)!;
    change.script = ATTACKER;
  });
  // the spell still verifies (the proof does not commit to outputs past the coins)
  const c = checkProverAnswer(req, stolen, { mock: true });
  const honestCheck = checkProverAnswer(req, txs, { mock: true });
  assert.equal(c.change, 0n);
  assert.equal(c.proverFee, honestCheck.change, 'the redirected change shows as kept by the prover');
});

test("charms spell prove: a hostile proving service's transaction is never printed", async (t) => {
  if (!sharedOrSkip(t)) return;
  const { f, yaml, txs } = await honest();
  const answers = [tamper(txs, (tx) => (tx.outputs[0]!.script = ATTACKER)), txs];
  let served = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/cbor' }).end(encodeProveResponse(answers[served++]!, 'cbor')));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/spells/prove`;
  const dir = mkdtempSync(join(tmpdir(), 'answer-check-'));
  writeFileSync(join(dir, 'spell.yaml'), yaml);
  const run = () =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const p = spawn(process.execPath, [charmsBin, 'spell', 'prove', '--spell', 'spell.yaml', '--prev-txs', f.hex, '--change-address', f.changeAddress], {
        cwd: dir,
        env: { ...process.env, SVC_PROVE_API_URL: url, SVC_APP_CACHE_DIR: 'off' },
      });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d) => (stdout += d));
      p.stderr.on('data', (d) => (stderr += d));
      p.on('exit', (status) => resolve({ status, stdout, stderr }));
    });
  try {
    const bad = await run();
    assert.equal(bad.status, 1, bad.stderr);
    assert.equal(bad.stdout, '', 'nothing to sign was printed');
    assert.match(bad.stderr, /does not match the request: output #0 pays 5120ee.*do not sign it/);
    const good = await run();
    assert.equal(good.status, 0, good.stderr);
    assert.equal(good.stdout, `[{"bitcoin":"${txs[0]!.hex}"}]\n`);
    assert.match(good.stderr, /prover's answer checked: .* sats network fee/);
  } finally {
    server.close();
  }
});

test('Cardano: an honest mock answer passes (spell output reported as kept); a changed output or input is refused', async () => {
  const { cardanoFundingTx, cardanoProveRequest } = await import('../testing/fixtures.js');
  const { DEFAULT_CARDANO_FEE_ADDRESS } = await import('../cardano/builder.js');
  const { cardanoAddressBytes } = await import('../cardano/address.js');
  const { cardanoTxHash, parseCardanoTx } = await import('../cardano/tx.js');
  const { utxoIdFromString } = await import('../model/primitives.js');
  const addr = cardanoAddressBytes(DEFAULT_CARDANO_FEE_ADDRESS);
  const fund = cardanoFundingTx([
    { address: addr, lovelace: 50_000_000n },
    { address: addr, lovelace: 5_000_000n },
  ]);
  const fundId = toHex(cardanoTxHash(parseCardanoTx(fund)));
  const req = cardanoProveRequest(
    `version: 15\ntx:\n  ins: [${fundId}:0]\n  outs: [{}]\n  coins: [{amount: 2000000, dest: ${toHex(addr)}}]\napp_public_inputs: {}\n`,
    [fund],
    DEFAULT_CARDANO_FEE_ADDRESS,
    utxoIdFromString(`${fundId}:1`),
  );
  const { txs } = await proveSpellTx(req, { backend: new MockBackend() });
  const c = checkProverAnswer(req, txs, { mock: true });
  assert.equal(c.chain, 'cardano');
  // the change address is the fee address here: the spell output counts as change; fee from the body
  assert.ok(c.networkFee > 100_000n && c.networkFee < 2_000_000n, String(c.networkFee));
  assert.equal(c.change + c.proverFee + 2_000_000n + c.networkFee, 50_000_000n);
  // the requested output's lovelace changed in the CBOR (2 000 000 = 1a001e8480 → 1a001e8481)
  const hex = txs[0]!.hex;
  const at = hex.indexOf('1a001e8480');
  assert.ok(at > 0);
  const bumped = [{ chain: 'cardano' as const, hex: hex.slice(0, at) + '1a001e8481' + hex.slice(at + 10) }];
  assert.throws(() => checkProverAnswer(req, bumped, { mock: true }), refused(/output #0 holds 2000001 lovelace instead of 2000000/));
  // another input (the request's collateral) in place of the requested one
  const other = cardanoProveRequest(
    `version: 15\ntx:\n  ins: [${fundId}:1]\n  outs: [{}]\n  coins: [{amount: 2000000, dest: ${toHex(addr)}}]\napp_public_inputs: {}\n`,
    [fund],
    DEFAULT_CARDANO_FEE_ADDRESS,
    utxoIdFromString(`${fundId}:0`),
  );
  assert.throws(() => checkProverAnswer(other, txs, { mock: true }), refused(/spends .*:0 instead of .*:1/));
});
