import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { parseTx, type BitcoinTx } from './tx.js';
import { opReturnSpellPayload, opReturnSpellScript, witnessSpellPayload } from './spell-location.js';
import { buildScript, OP_ENDIF, OP_IF, OP_RETURN } from './script.js';
import { decodeCbor } from '../codec/cbor.js';
import { readSharedJson, readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';
import { fromHex, toHex, utf8 } from '../util/bytes.js';
import { CharmsError } from '../errors.js';

const noSpell = (re: RegExp) => (e: unknown) => e instanceof CharmsError && e.code === 'NO_SPELL' && re.test(e.message);
const txWithOutputs = (...scripts: Uint8Array[]): BitcoinTx => ({
  version: 2,
  locktime: 0,
  inputs: [{ txid: new Uint8Array(32), vout: 0, scriptSig: new Uint8Array(0), sequence: 0xffffffff, witness: [] }],
  outputs: scripts.map((script) => ({ value: 0n, script })),
});
const txWithWitness = (witness: Uint8Array[]): BitcoinTx => ({
  version: 2,
  locktime: 0,
  inputs: [{ txid: new Uint8Array(32), vout: 0, scriptSig: new Uint8Array(0), sequence: 0xffffffff, witness }],
  outputs: [],
});
const SPELL = utf8('spell');
const CONTROL = Uint8Array.from({ length: 33 }, (_, i) => (i === 0 ? 0xc0 : i));

test('V12 transaction: the OP_RETURN payload is exactly the recorded 918 bytes', (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson('vectors', 'bitcoin-v12-spell-tx-decoded.json');
  const tx = parseTx(fromHex(v.tx_hex));
  const payload = opReturnSpellPayload(tx);
  assert.equal(toHex(payload), v.payload_hex);
  assert.equal(payload.length, 918);
  assert.ok(toHex(tx.outputs[v.spell_output_index]!.script).startsWith(v.op_return_script_prefix_hex));
  assert.equal(toHex(opReturnSpellScript(payload)), toHex(tx.outputs[v.spell_output_index]!.script));
});

test('witness-era transactions (V6 mock, V7, V8): the envelope payload is exactly the recorded bytes', (t) => {
  if (!sharedOrSkip(t)) return;
  const list = readSharedJson<{ tx_hex: string; payload_hex: string; txid: string }[]>('vectors', 'bitcoin-witness-era-spell-txs.json');
  assert.equal(list.length, 3);
  for (const x of list) {
    const tx = parseTx(fromHex(x.tx_hex));
    assert.throws(() => opReturnSpellPayload(tx), noSpell(/^expected exactly one spell OP_RETURN output$/));
    assert.equal(toHex(witnessSpellPayload(tx)), x.payload_hex, x.txid);
  }
});

/** The reference's lookup: OP_RETURN first; on any failure, including CBOR, the witness envelope. */
function locate(tx: BitcoinTx): { payload?: Uint8Array; error?: string } {
  const decodes = (p: Uint8Array) => {
    const v = decodeCbor(p, { allowTrailing: true });
    if (!Array.isArray(v) || v.length !== 2) throw new Error('not a (spell, proof) pair');
    return p;
  };
  try {
    return { payload: decodes(opReturnSpellPayload(tx)) };
  } catch {
    try {
      return { payload: decodes(witnessSpellPayload(tx)) };
    } catch (e) {
      return { error: (e as Error).message };
    }
  }
}

test('every Bitcoin chain vector: a spell is found exactly where the oracle found one', (t) => {
  if (!sharedOrSkip(t)) return;
  let withSpell = 0;
  let without = 0;
  for (const f of readdirSync(sharedPath('vectors', 'chain')).filter((f) => f.endsWith('.bitcoin.hex'))) {
    const expected = readSharedJson('vectors', 'chain', 'expected', f.replace('.bitcoin.hex', '.json'));
    const r = locate(parseTx(fromHex(readSharedText('vectors', 'chain', f).trim())));
    assert.equal(r.payload !== undefined, expected.has_spell, `${f}: ${r.error ?? ''}`);
    if (expected.has_spell) withSpell++;
    else {
      without++;
      // The oracle's short wording is contained in (or equal to) the reference's message.
      if (expected.error === 'no control block') assert.equal(r.error, 'no control block', f);
      if (expected.error === 'expected OP_FALSE')
        assert.match(r.error!, /^Condition failed: `instructions.next\(\) == Some\(Ok\(Instruction::PushBytes\(PushBytes::empty\(\)\)\)\)`/, f);
    }
  }
  assert.deepEqual([withSpell, without], [23, 7]);
});

test('OP_RETURN path: the reference rules and error texts', () => {
  const payload = Uint8Array.of(0x82, 0x01, 0x02);
  const good = opReturnSpellScript(payload);
  assert.equal(toHex(good), '6a057370656c6c03820102');
  assert.deepEqual(opReturnSpellPayload(txWithOutputs(Uint8Array.of(0x51), good)), payload);
  // The first instruction may be any opcode, not only OP_RETURN.
  assert.deepEqual(opReturnSpellPayload(txWithOutputs(buildScript([0x51, SPELL, payload]))), payload);
  // Two spell outputs, or none.
  assert.throws(() => opReturnSpellPayload(txWithOutputs(good, good)), noSpell(/^expected exactly one spell OP_RETURN output$/));
  assert.throws(() => opReturnSpellPayload(txWithOutputs(buildScript([OP_RETURN, utf8('spelL'), payload]))), noSpell(/exactly one/));
  // A first instruction that does not parse disqualifies the output.
  assert.throws(() => opReturnSpellPayload(txWithOutputs(Uint8Array.of(0x4c))), noSpell(/exactly one/));
  // Third instruction missing, an opcode, or truncated.
  const third = noSpell(/^expected spell data payload in OP_RETURN$/);
  assert.throws(() => opReturnSpellPayload(txWithOutputs(buildScript([OP_RETURN, SPELL]))), third);
  assert.throws(() => opReturnSpellPayload(txWithOutputs(buildScript([OP_RETURN, SPELL, OP_IF]))), third);
  assert.throws(() => opReturnSpellPayload(txWithOutputs(buildScript([OP_RETURN, SPELL, 0x4c]))), third);
  // Anything after the payload, even an unparseable byte.
  const extra = noSpell(/^unexpected additional data in OP_RETURN$/);
  assert.throws(() => opReturnSpellPayload(txWithOutputs(buildScript([OP_RETURN, SPELL, payload, payload]))), extra);
  assert.throws(() => opReturnSpellPayload(txWithOutputs(buildScript([OP_RETURN, SPELL, payload, 0x4d]))), extra);
  // OP_0 as the payload is an (empty) push: found, CBOR decoding is the caller's problem.
  assert.equal(opReturnSpellPayload(txWithOutputs(buildScript([OP_RETURN, SPELL, new Uint8Array(0)]))).length, 0);
});

test('witness path: control block, envelope rules and the reference error texts', () => {
  const chunk1 = new Uint8Array(520).fill(7);
  const chunk2 = Uint8Array.of(1, 2, 3);
  const leaf = buildScript([new Uint8Array(0), OP_IF, SPELL, chunk1, chunk2, OP_ENDIF, 0xac]);
  assert.equal(toHex(witnessSpellPayload(txWithWitness([new Uint8Array(64), leaf, CONTROL]))), toHex(new Uint8Array([...chunk1, ...chunk2])));
  // An annex (last item starting 0x50, at least 3 items) is skipped.
  assert.equal(witnessSpellPayload(txWithWitness([leaf, CONTROL, Uint8Array.of(0x50, 1)])).length, 523);

  assert.throws(() => witnessSpellPayload({ ...txWithWitness([]), inputs: [] }), noSpell(/^transaction does not have inputs$/));
  assert.throws(() => witnessSpellPayload(txWithWitness([])), noSpell(/^no control block$/));
  assert.throws(() => witnessSpellPayload(txWithWitness([new Uint8Array(64)])), noSpell(/^no control block$/));
  assert.throws(() => witnessSpellPayload(txWithWitness([leaf, Uint8Array.of(0x50)])), noSpell(/^no control block$/));
  assert.throws(
    () => witnessSpellPayload(txWithWitness([leaf, new Uint8Array(65)])),
    noSpell(/^the Taproot tree contains more than one leaf: only a single script is supported$/),
  );
  const annexVersion = Uint8Array.from(CONTROL);
  annexVersion[0] = 0x51;
  assert.throws(() => witnessSpellPayload(txWithWitness([leaf, annexVersion])), noSpell(/^no spell data in the last input's witness$/));

  const first = 'Condition failed: `instructions.next() == Some(Ok(Instruction::PushBytes(PushBytes::empty())))`';
  const withLeaf = (script: Uint8Array) => () => witnessSpellPayload(txWithWitness([script, CONTROL]));
  const msg = (text: string) => (e: unknown) => e instanceof CharmsError && e.code === 'NO_SPELL' && e.message === text;
  assert.throws(withLeaf(new Uint8Array(0)), msg(`${first} (None vs Some(Ok(PushBytes(PushBytes([])))))`));
  assert.throws(withLeaf(Uint8Array.of(0x51)), msg(`${first} (Some(Ok(Op(OP_PUSHNUM_1))) vs Some(Ok(PushBytes(PushBytes([])))))`));
  assert.throws(withLeaf(Uint8Array.of(0x01, 0x05)), msg(`${first} (Some(Ok(PushBytes(PushBytes([5])))) vs Some(Ok(PushBytes(PushBytes([])))))`));
  assert.throws(withLeaf(Uint8Array.of(0x02, 0x05, 0x06)), msg(first)); // Debug text with spaces: no detail
  assert.throws(withLeaf(Uint8Array.of(0x4c)), msg(`${first} (Some(Err(EarlyEndOfScript)) vs Some(Ok(PushBytes(PushBytes([])))))`));
  assert.throws(
    withLeaf(Uint8Array.of(0x00, 0x64)),
    msg('Condition failed: `instructions.next() == Some(Ok(Instruction::Op(OP_IF)))` (Some(Ok(Op(OP_NOTIF))) vs Some(Ok(Op(OP_IF))))'),
  );
  assert.throws(withLeaf(buildScript([new Uint8Array(0), OP_IF, OP_ENDIF])), msg('no spell data'));
  assert.throws(withLeaf(buildScript([new Uint8Array(0), OP_IF, utf8('spelx')])), msg('no spell marker'));
  assert.throws(withLeaf(buildScript([new Uint8Array(0), OP_IF, SPELL, chunk2])), msg('unexpected opcode')); // no OP_ENDIF
  assert.throws(withLeaf(buildScript([new Uint8Array(0), OP_IF, SPELL, chunk2, 0x51, OP_ENDIF])), msg('unexpected opcode'));
});
