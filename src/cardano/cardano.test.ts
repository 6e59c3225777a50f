import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { extractAndVerifySpell, spellToJson } from '../verify/index.js';
import { readSharedJson, readSharedText, sharedOrSkip, sharedPath } from '../testing/shared.js';
import { parseJson, toJsonPretty } from '../codec/json.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { parseCardanoTx, cardanoTxid } from './tx.js';
import { verifyCardanoFinality } from './finality.js';
import { cardanoAddressBytes } from './address.js';
import { assetNameForApp, policyIdForApp, proxyAddressForApps } from './scripts.js';
import { appFromString } from '../model/primitives.js';
import { encodeCbor, CborWriter } from '../codec/cbor.js';
import { parseYaml } from '../codec/yaml.js';
import { ValueMap } from '../codec/value.js';
import { chainTxFromValue } from '../model/request.js';

test('Cardano chain vectors: verdicts and exact spells (content, permutation), with and without mock', (t) => {
  if (!sharedOrSkip(t)) return;
  const dir = sharedPath('vectors', 'chain');
  let verified = 0;
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.cardano.hex'))) {
    const id = f.replace('.cardano.hex', '');
    const hex = readSharedText('vectors', 'chain', f).trim();
    if (!id.startsWith('neg')) assert.equal(toHex(cardanoTxid(parseCardanoTx(fromHex(hex)))), toHex(fromHex(id).reverse()));
    for (const mock of [false, true]) {
      const mf = `${id}.mock.json`;
      const exp = readSharedJson('vectors', 'chain', 'expected', mock && existsSync(sharedPath('vectors', 'chain', 'expected', mf)) ? mf : `${id}.json`);
      let got: string | undefined;
      try {
        got = spellToJson(extractAndVerifySpell({ cardano: hex }, mock));
      } catch (e) {
        assert.ok(e instanceof CharmsError, String(e));
      }
      if (exp.verified) {
        assert.equal(got, toJsonPretty(parseJson(JSON.stringify(exp.spell))), `${id} mock=${mock}`);
        verified++;
      } else assert.equal(got, undefined, `${id} mock=${mock}: ${exp.error}`);
    }
  }
  assert.ok(verified >= 6);
});

test('the v11 vector verifies and prints the decoded spell; flipped datum or proof bytes fail', (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson('vectors', 'cardano-v11-tx.json');
  const hex: string = v.tx_hex ?? v.cardano ?? v.tx ?? Object.values(v).find((x) => typeof x === 'string' && /^84a/.test(x as string));
  const spell = extractAndVerifySpell({ cardano: hex }, false);
  const decoded = readSharedJson('vectors', 'cardano-tx-decoded.json');
  if (decoded.spell) assert.deepEqual(JSON.parse(spellToJson(spell)), decoded.spell);
  const tx = fromHex(hex);
  // the datum: an indefinite byte string of 64-byte chunks (5f 5840 …); flip bytes across it
  const datumStart = Buffer.from(tx).indexOf(Buffer.from([0x5f, 0x58, 0x40]));
  assert.ok(datumStart > 0);
  let flips = 0;
  for (let i = datumStart + 3; i < datumStart + 1000; i += 23) {
    const bad = Uint8Array.from(tx);
    bad[i]! ^= 0x04;
    assert.throws(() => extractAndVerifySpell({ cardano: bad }, true), CharmsError, `flip at byte ${i}`);
    flips++;
  }
  assert.ok(flips > 20);
});

test('a permutation that is not a bijection is rejected (the reference would accept it)', (t) => {
  if (!sharedOrSkip(t)) return;
  const hex = readSharedText('vectors', 'chain', '361927aed267ef049a5b9315aa7296493b385938d73340146b0af5d4637a02cf.cardano.hex').trim();
  const tx = fromHex(hex);
  // the Reward redeemer's data is Plutus bytes holding CBOR [0, 2, 1]: 0x43 0x83 0x00 0x02 0x01
  const at = Buffer.from(tx).indexOf(Buffer.from([0x44, 0x83, 0x00, 0x02, 0x01]));
  const at2 = at >= 0 ? at : Buffer.from(tx).indexOf(Buffer.from([0x83, 0x00, 0x02, 0x01]));
  assert.ok(at2 > 0, 'found the permutation');
  const perm = Buffer.from(tx).indexOf(Buffer.from([0x83, 0x00, 0x02, 0x01]), at2);
  const dup = Uint8Array.from(tx);
  dup[perm + 3] = 0x00; // [0, 2, 0]: input 0 counted twice
  assert.throws(() => extractAndVerifySpell({ cardano: dup }, false), /not a permutation/);
});

test('finality form {tx, signature}: the Scrolls key signature over the body hash', (t) => {
  if (!sharedOrSkip(t)) return;
  const d = readSharedJson('vectors', 'cardano-finality-tx-decoded.json');
  const tx = fromHex(d.tx_hex);
  assert.ok(verifyCardanoFinality(tx, fromHex(d.finality_signature)));
  const bad = fromHex(d.finality_signature);
  bad[0]! ^= 1;
  assert.equal(verifyCardanoFinality(tx, bad), false);
  const y = parseYaml(readSharedText('vectors', 'chain', '712fcb00421d163794c22eef627c5e49f3d3f19ea95953871f90286e1bf6f66c.cardano.finality.yaml'));
  const ct = chainTxFromValue(y, 'prev');
  assert.equal(ct.chain, 'cardano');
  assert.ok(ct.chain === 'cardano' && ct.signature && verifyCardanoFinality(fromHex(ct.hex), fromHex(ct.signature)));
});

test('addresses, policy ids, asset names and proxy addresses match the vectors', (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson('vectors', 'cardano-script-vectors.json');
  for (const a of v.util_dest_addr) assert.equal(toHex(cardanoAddressBytes(a.addr)), a.dest);
  for (const p of v.app_policies) {
    const app = appFromString(p.app);
    assert.equal(toHex(policyIdForApp(app)), p.policy_id);
    assert.equal(toHex(assetNameForApp(app)), p.asset_name);
  }
  assert.equal(toHex(proxyAddressForApps(v.proxy_vector_from_chain.apps.map((s: string) => appFromString(s)))), v.proxy_vector_from_chain.expected_output_address);
  for (const bad of ['addr1xyz', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4']) assert.throws(() => cardanoAddressBytes(bad), CharmsError);
  void CborWriter;
  void ValueMap;
});
