/**
 * Hostile transactions against the read side: whatever the bytes, extractAndVerifySpell answers or
 * throws a CharmsError (the query service turns those into 4xx, anything else into a 500).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { extractAndVerifySpell } from './index.js';
import { serializeTx } from '../bitcoin/tx.js';
import { opReturnSpellScript } from '../bitcoin/spell-location.js';
import { CharmsError } from '../errors.js';

/** CBOR `[<byte string in n one-byte chunks>, h'']`: a (spell, proof) pair with a huge chunked spell. */
function chunkedPayload(n: number): Uint8Array {
  const b = new Uint8Array(1 + 1 + n * 2 + 1 + 1);
  b[0] = 0x82;
  b[1] = 0x5f;
  for (let i = 0; i < n; i++) {
    b[2 + i * 2] = 0x41;
    b[3 + i * 2] = 0x00;
  }
  b[2 + n * 2] = 0xff;
  b[3 + n * 2] = 0x40;
  return b;
}

/** A Taproot envelope script `OP_FALSE OP_IF "spell" <pushes> OP_ENDIF` carrying `payload`. */
function envelope(payload: Uint8Array, chunk = 520): Uint8Array {
  const parts: number[] = [0x00, 0x63, 0x05, ...new TextEncoder().encode('spell')];
  for (let i = 0; i < payload.length; i += chunk) {
    const p = payload.subarray(i, i + chunk);
    if (p.length < 0x4c) parts.push(p.length);
    else parts.push(0x4d, p.length & 0xff, p.length >> 8);
    parts.push(...p);
  }
  parts.push(0x68);
  return Uint8Array.from(parts);
}

const txWith = (opts: { opReturn?: Uint8Array; witness?: Uint8Array[] }) =>
  serializeTx({
    version: 2,
    inputs: [{ txid: new Uint8Array(32).fill(1), vout: 0, scriptSig: new Uint8Array(0), sequence: 0xffffffff, witness: opts.witness ?? [] }],
    outputs: [{ value: 0n, script: opts.opReturn ?? Uint8Array.of(0x51) }],
    locktime: 0,
  });

const isCharmsError = (e: unknown) => e instanceof CharmsError;

test('a spell payload with 150 000 indefinite-length chunks is a CharmsError, not a RangeError', () => {
  const payload = chunkedPayload(150_000);
  const control = new Uint8Array(33).fill(0xc0);
  assert.throws(() => extractAndVerifySpell({ bitcoin: txWith({ witness: [envelope(payload), control] }) }, true), isCharmsError);
  assert.throws(() => extractAndVerifySpell({ bitcoin: txWith({ opReturn: opReturnSpellScript(payload) }) }, true), isCharmsError);
});

test('an envelope of 150 000 one-byte pushes is a CharmsError, not a RangeError', () => {
  const control = new Uint8Array(33).fill(0xc0);
  const script = envelope(new Uint8Array(150_000).fill(0x01), 1);
  assert.throws(() => extractAndVerifySpell({ bitcoin: txWith({ witness: [script, control] }) }, true), isCharmsError);
});
