import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readSharedJson, readSharedText, sharedOrSkip } from '../testing/shared.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { appFromString } from '../model/primitives.js';
import { assetNameForApp, expectedTokens, isTokenApp, policyIdForApp, tokenQuantity } from './assets.js';
import { appliedProxyScript, appsHash, proxyScriptForApps, proxyScriptHashForApps, scriptHash } from './scripts.js';
import { PROXY_SCRIPT_PREFIX_HEX } from './scripts-data.js';
import { parseCardanoTx, parseOutputs } from './tx.js';

test('the embedded template is the vector prefix; applied scripts, policy ids and asset names match', (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson('vectors', 'cardano-script-vectors.json');
  assert.equal(PROXY_SCRIPT_PREFIX_HEX, v.applied_script_template.prefix_hex);
  assert.ok(v.app_policies.length >= 3);
  for (const p of v.app_policies) {
    const app = appFromString(p.app);
    assert.equal(toHex(appliedProxyScript(app.vk)), p.applied_script_cbor_hex);
    assert.equal(toHex(policyIdForApp(app)), p.policy_id);
    assert.equal(toHex(assetNameForApp(app)), p.asset_name);
    assert.equal(assetNameForApp(app).length, 32);
  }
  assert.equal(toHex(policyIdForApp(appFromString(v.upstream_policy_vector.app))), v.upstream_policy_vector.expected_policy_id);
  for (const p of v.proxy_scripts) {
    const apps = p.apps.map((s: string) => appFromString(s));
    assert.equal(toHex(appsHash(apps)), p.apps_hash_blake2b256);
    assert.equal(toHex(proxyScriptForApps(apps)), p.applied_script_cbor_hex);
    assert.equal(toHex(proxyScriptHashForApps(apps)), p.script_hash);
  }
  // pitfall from the research note: the hash is over 0x03 ‖ the CBOR-wrapped script, once
  const app = appFromString(v.upstream_policy_vector.app);
  assert.equal(toHex(scriptHash(appliedProxyScript(app.vk))), v.upstream_policy_vector.expected_policy_id);
});

test('CIP-67 labels: 333 for tokens, 222 for NFTs; identity bytes 4..32; other tags have no asset', () => {
  const id = Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(2, '0')).join('');
  const vk = 'ab'.repeat(32);
  assert.equal(toHex(assetNameForApp(appFromString(`t/${id}/${vk}`))), '0014df10' + id.slice(8));
  assert.equal(toHex(assetNameForApp(appFromString(`n/${id}/${vk}`))), '000de140' + id.slice(8));
  for (const tag of ['c', 's', 'b'])
    assert.throws(
      () => assetNameForApp(appFromString(`${tag}/${id}/${vk}`)),
      (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT',
    );
  assert.equal(isTokenApp(appFromString(`c/${id}/${vk}`)), false);
  // apps with the same vk share a policy
  assert.equal(toHex(policyIdForApp(appFromString(`t/${id}/${vk}`))), toHex(policyIdForApp(appFromString(`n/${'00'.repeat(32)}/${vk}`))));
  // the returned id is a copy (the cache cannot be corrupted by callers)
  const p = policyIdForApp(appFromString(`t/${id}/${vk}`));
  p[0] = p[0]! ^ 0xff;
  assert.notEqual(toHex(policyIdForApp(appFromString(`t/${id}/${vk}`))), toHex(p));
});

test('expected CNTs: amounts for tokens, 1 for NFTs, last app wins on a name collision; bad amounts rejected', () => {
  const vk = 'cd'.repeat(32);
  const t1 = appFromString(`t/00000001${'77'.repeat(28)}/${vk}`);
  const t2 = appFromString(`t/00000002${'77'.repeat(28)}/${vk}`); // same asset name as t1
  const n = appFromString(`n/${'99'.repeat(32)}/${vk}`);
  const c = appFromString(`c/${'99'.repeat(32)}/${vk}`);
  const e = expectedTokens([
    [t2, 7n],
    [n, 'anything'],
    [c, 5n],
    [t1, 3n],
  ]);
  const policy = toHex(policyIdForApp(t1));
  assert.deepEqual([...e.keys()], [policy]);
  assert.deepEqual(
    [...e.get(policy)!].sort(),
    [
      ['000de140' + '99'.repeat(28), 1n],
      ['0014df10' + '77'.repeat(28), 7n], // t2 sorts after t1, so its amount is kept (MultiAsset::set)
    ].sort(),
  );
  assert.equal(tokenQuantity(n, null), 1n);
  for (const bad of [null, -1n, 1n << 64n, 'x', 1.5])
    assert.throws(
      () => tokenQuantity(t1, bad),
      (err: unknown) => err instanceof CharmsError && err.code === 'INVALID_SPELL',
    );
});

test('the real v11 transaction: output 1 charms would need the three USD-token CNTs of one policy', (t) => {
  if (!sharedOrSkip(t)) return;
  const tx = parseCardanoTx(fromHex(readSharedText('vectors', 'chain', '361927aed267ef049a5b9315aa7296493b385938d73340146b0af5d4637a02cf.cardano.hex').trim()));
  const outs = parseOutputs(tx);
  // its foreign tokens are not Charms CNTs
  const d = readSharedJson('vectors', 'cardano-tx-decoded.json');
  const apps = Object.keys(d.spell.app_public_inputs)
    .map((s) => appFromString(s))
    .filter(isTokenApp);
  assert.equal(apps.length, 3);
  for (const app of apps) assert.equal(outs[0]!.assets.get(toHex(policyIdForApp(app)))?.get(toHex(assetNameForApp(app))), undefined);
});
