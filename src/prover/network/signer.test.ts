import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { skipOrFail } from '../../testing/require.js';
import { toHex, utf8 } from '../../util/bytes.js';
import { NetworkSigner, addressHex, eip191Digest, recoverAddress } from './signer.js';

const KEY1 = '0x' + '00'.repeat(31) + '01';
const KEY = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';

test('addresses of well-known keys (Ethereum: key 1 and key 2)', () => {
  assert.equal(addressHex(new NetworkSigner(KEY1).address), '0x7e5f4552091a69125d5dfcb7b8c2659029395bdf');
  assert.equal(addressHex(new NetworkSigner('00'.repeat(31) + '02').address), '0x2b5ad5c4795c026514f8317c7a215e218dccd6cf');
  // web3.js docs' account for this key
  assert.equal(addressHex(new NetworkSigner(KEY).address), '0x2c7536e3605d9c16a7a3d7b1898e529396a65c23');
});

test('EIP-191 digest matches the published hashMessage("Hello World")', () => {
  assert.equal(toHex(eip191Digest(utf8('Hello World'))), 'a1de988600a42c4b4ab089b619297c17d53cffae5d5120d82d8a92d0bb3b78f2');
});

test('signatures are r‖s‖(27+parity), recover to the account, and verify with OpenSSL', (t) => {
  const s = new NetworkSigner(KEY);
  const msg = Uint8Array.from({ length: 300 }, (_, i) => (i * 7) & 0xff);
  const sig = s.sign(msg);
  assert.equal(sig.length, 65);
  assert.ok(sig[64] === 27 || sig[64] === 28);
  assert.deepEqual(recoverAddress(msg, sig), s.address);
  assert.deepEqual(s.sign(msg), sig, 'RFC 6979: deterministic');
  // low-s, as alloy/k256 normalise
  assert.ok(BigInt('0x' + toHex(sig.subarray(32, 64))) <= secp256k1.Point.CURVE().n / 2n);
  // create_artifact: the SDK's extra +27 on the last byte
  const a = s.signArtifactRequest();
  assert.ok(a[64] === 54 || a[64] === 55);
  assert.deepEqual(a.subarray(0, 64), s.sign(utf8('create_artifact')).subarray(0, 64));
  assert.deepEqual(recoverAddress(utf8('create_artifact'), Uint8Array.from([...a.subarray(0, 64), a[64]! - 27])), s.address);

  // Independent check: OpenSSL verifies (r, s) over the EIP-191 digest with the public key.
  if (spawnSync('openssl', ['version']).status !== 0) return skipOrFail(t, 'openssl not found');
  const dir = mkdtempSync(join(tmpdir(), 'sig-'));
  const pub = secp256k1.getPublicKey(Buffer.from(KEY, 'hex'), false);
  // SubjectPublicKeyInfo DER for an uncompressed secp256k1 point
  const spki = Buffer.concat([Buffer.from('3056301006072a8648ce3d020106052b8104000a034200', 'hex'), Buffer.from(pub)]);
  writeFileSync(join(dir, 'pub.der'), spki);
  const der = (x: Uint8Array) => {
    let v = Buffer.from(x);
    while (v.length > 1 && v[0] === 0 && v[1]! < 0x80) v = v.subarray(1);
    if (v[0]! >= 0x80) v = Buffer.concat([Buffer.of(0), v]);
    return Buffer.concat([Buffer.of(2, v.length), v]);
  };
  const r = der(sig.subarray(0, 32));
  const ss = der(sig.subarray(32, 64));
  writeFileSync(join(dir, 'sig.der'), Buffer.concat([Buffer.of(0x30, r.length + ss.length), r, ss]));
  writeFileSync(join(dir, 'digest'), eip191Digest(msg));
  const v = spawnSync('openssl', [
    'pkeyutl',
    '-verify',
    '-pubin',
    '-keyform',
    'DER',
    '-inkey',
    join(dir, 'pub.der'),
    '-in',
    join(dir, 'digest'),
    '-sigfile',
    join(dir, 'sig.der'),
  ]);
  assert.equal(v.status, 0, v.stderr.toString() + v.stdout.toString());
  writeFileSync(join(dir, 'digest'), eip191Digest(utf8('another message')));
  const w = spawnSync('openssl', [
    'pkeyutl',
    '-verify',
    '-pubin',
    '-keyform',
    'DER',
    '-inkey',
    join(dir, 'pub.der'),
    '-in',
    join(dir, 'digest'),
    '-sigfile',
    join(dir, 'sig.der'),
  ]);
  assert.notEqual(w.status, 0, 'OpenSSL must reject the signature for another digest');
});

test('the key never shows up in errors, JSON or inspect output', () => {
  const s = new NetworkSigner(KEY);
  assert.ok(!JSON.stringify(s).includes(KEY));
  assert.ok(!inspect(s, { showHidden: true, depth: 5 }).includes(KEY.slice(0, 16)));
  for (const bad of ['xyz', KEY.slice(2), '00'.repeat(32), 'ff'.repeat(32)])
    assert.throws(
      () => new NetworkSigner(bad),
      (e: Error & { code?: string }) => e.code === 'CONFIG' && !e.message.includes(bad),
    );
});
