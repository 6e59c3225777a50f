import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redactText, redactUrl, withoutCredentials } from './redact.js';

test('redactUrl removes user-info, secret query values and key-like path segments', () => {
  assert.equal(redactUrl('https://alice:s3cret@rpc.example/v1?key=abc&net=main'), 'https://REDACTED@rpc.example/v1?key=REDACTED&net=main');
  assert.equal(
    redactUrl('https://rpc.example/?api_key=k&token=t&access_token=a'),
    'https://rpc.example/?api_key=REDACTED&token=REDACTED&access_token=REDACTED',
  );
  assert.equal(redactUrl('https://mainnet.example/v3/9aa3d95b3bc440fa88ea12eaa4456161'), 'https://mainnet.example/v3/REDACTED');
  // public data stays readable: txids, ordinary paths, ports
  const txid = 'ab'.repeat(32);
  assert.equal(redactUrl(`http://127.0.0.1:3000/api/tx/${txid}/hex`), `http://127.0.0.1:3000/api/tx/${txid}/hex`);
  assert.equal(redactUrl('https://v15.charms.dev/spells/prove'), 'https://v15.charms.dev/spells/prove');
  assert.equal(redactUrl('not a url'), '(unparsable URL)');
});

test('redactText redacts every URL inside a message', () => {
  const msg = 'cannot reach http://u:pw@10.0.0.1:8332/?key=K1 (then https://x:y@h/p): refused';
  const out = redactText(msg);
  assert.ok(!/pw|K1|x:y/.test(out), out);
  assert.match(out, /cannot reach http:\/\/REDACTED@10\.0\.0\.1:8332\/\?key=REDACTED /);
});

test('withoutCredentials moves user:password into a Basic Authorization header', () => {
  const r = withoutCredentials('https://us%40er:p%3Ass@host:8443/spells/prove?x=1');
  assert.equal(r.url, 'https://host:8443/spells/prove?x=1');
  assert.equal(Buffer.from(r.authorization!.slice(6), 'base64').toString(), 'us@er:p:ss');
  assert.deepEqual(withoutCredentials('http://host/p'), { url: 'http://host/p', authorization: undefined });
});
