/**
 * Proof threads: the verdicts and proofs they give are the event loop's; a 2-app spell proved
 * through them is the one proved inline; a thread lost mid-task fails that task only.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { sha256 } from '@noble/hashes/sha2.js';
import { CharmsError } from '../errors.js';
import { ProofWorkers } from './proof-workers.js';
import { MockBackend } from './backend.js';
import { proveSpellTx } from './prove.js';
import { extractBitcoinSpell } from '../bitcoin/extract.js';
import { extractCardanoSpell } from '../cardano/extract.js';
import { parseTx, serializeTx } from '../bitcoin/tx.js';
import { spellProofCheck } from '../groth16/spell.js';
import { verifySpellProofs, type SpellProofCheck } from '../groth16/verify.js';
import { proveMock, verifyMockProof } from '../groth16/mock.js';
import { clearVerifiedPrevSpells } from '../checker/prev-spells.js';
import { appFromString } from '../model/primitives.js';
import { extractAndVerifySpell, spellToJson } from '../verify/index.js';
import { fromHex } from '../util/bytes.js';
import { readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';
import { bitcoinProveRequest, funding, identityFor, templateApp } from '../testing/fixtures.js';
import { shutdownRunner } from '../runner/index.js';

const workers = new ProofWorkers(2);
after(async () => {
  await workers.close();
  await shutdownRunner();
});

test('proof threads give verifySpellProofs verdicts on every chain vector, a tampered proof included, and valid mock proofs', async (t) => {
  if (!sharedOrSkip(t)) return;
  const checks: SpellProofCheck[] = [];
  for (const f of readdirSync(sharedPath('vectors', 'chain'))
    .filter((f) => f.endsWith('.hex'))
    .sort()) {
    const bytes = fromHex(readSharedText('vectors', 'chain', f).trim());
    try {
      const { spell, proof } = f.includes('.bitcoin.') ? extractBitcoinSpell(bytes) : extractCardanoSpell(bytes, true);
      checks.push(spellProofCheck(spell, proof, true));
    } catch {
      /* no spell to check */
    }
  }
  assert.ok(checks.length >= 10);
  const bad = { ...checks[0]!, proof: Uint8Array.from(checks[0]!.proof, (b, i) => (i === 40 ? b ^ 1 : b)) };
  const all = [...checks, bad];
  const inline = verifySpellProofs(all).map((e) => e?.code ?? 'ok');
  const threaded = (await workers.verify(all)).map((e) => e?.code ?? 'ok');
  assert.deepEqual(threaded, inline);
  assert.notEqual(threaded.at(-1), 'ok');
  const pv = new Uint8Array(300).fill(5);
  const proof = await workers.proveMock(pv);
  assert.equal(verifyMockProof(proof, pv), true);
  assert.equal(verifyMockProof(proveMock(pv), pv), true);
});

test('a 2-app spell proved with proof threads is the spell proved on the event loop (same tx, but the random proof)', async (t) => {
  if (!sharedOrSkip(t)) return;
  const app = await templateApp();
  const f = funding(readSharedText);
  const in0 = `${f.txid}:0`;
  const nft = `n/${identityFor(in0)}/${app.vk}`;
  const coin = `{amount: 1000, dest: ${f.dest}}`;
  const bins: [Uint8Array, Uint8Array][] = [[sha256(app.wasm), app.wasm]];
  const req = bitcoinProveRequest(
    f,
    `version: 15\ntx:\n  ins: [${in0}]\n  outs:\n  - 0: {ticker: W, remaining: 5}\n  coins: [${coin}]\napp_public_inputs:\n  ${nft}: ~\n`,
    [f.hex],
    {
      app_private_inputs: [[appFromString(nft), in0]],
      binaries: bins,
    },
  );
  clearVerifiedPrevSpells();
  const inline = (await proveSpellTx(req, { backend: new MockBackend() })).txs[0]!.hex;
  clearVerifiedPrevSpells();
  const threaded = (await proveSpellTx(req, { backend: new MockBackend(workers), proofWorkers: workers })).txs[0]!.hex;
  assert.equal(spellToJson(extractAndVerifySpell({ bitcoin: threaded }, true)), spellToJson(extractAndVerifySpell({ bitcoin: inline }, true)));
  // the same transaction but for the spell output (its proof is random) and the change amount
  // (the proof's CBOR length varies a little with its bytes, and the fee with it)
  const strip = (hex: string) => {
    const tx = parseTx(fromHex(hex));
    tx.outputs = tx.outputs.filter((o) => o.script[0] !== 0x6a).map((o, i, all) => (i === all.length - 1 ? { ...o, value: 0n } : o));
    return serializeTx(tx);
  };
  assert.deepEqual(strip(threaded), strip(inline));
});

test('a proof thread lost mid-task fails that task with INTERNAL; the next task gets a new thread', async () => {
  const own = new ProofWorkers(1);
  const outcome = own.proveMock(new Uint8Array(10)).then(
    () => 'resolved',
    (e: unknown) => e,
  );
  await own.close();
  const e = await outcome;
  assert.ok(e instanceof CharmsError && e.code === 'INTERNAL', String(e));
  const pv = new Uint8Array(10).fill(1);
  assert.equal(verifyMockProof(await own.proveMock(pv), pv), true);
  await own.close();
});

test('idle proof threads do not keep a process alive (a server exits after SIGTERM once its work is done)', () => {
  const script = `const { ProofWorkers } = await import(${JSON.stringify(new URL('./proof-workers.js', import.meta.url).href)});
    const w = new ProofWorkers(2); w.warm(); await w.proveMock(new Uint8Array(10)); await w.verify([]);`;
  // the guard only stops a hung child: a process that ends by itself exits 0
  const file = join(mkdtempSync(join(tmpdir(), 'proof-workers-')), 'idle.mjs');
  writeFileSync(file, script);
  const r = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `exit ${r.status} signal ${r.signal}: ${r.stderr}`);
});
