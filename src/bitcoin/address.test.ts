import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addressToScript, BITCOIN_CHAIN_NAMES, decodeAddress, isAddressValidFor, isStandardScript, isStandardScriptFor, scriptToAddress } from './address.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const invalidInput = (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT';

test('util dest vectors: every address maps to its scriptPubKey and network, and back', (t) => {
  if (!sharedOrSkip(t)) return;
  const list = readSharedJson('vectors', 'util-dest-bitcoin-vectors.json').bitcoin as { addr: string; network: string; dest: string }[];
  assert.equal(list.length, 7);
  for (const v of list) {
    const { script, network } = addressToScript(v.addr);
    assert.equal(toHex(script), v.dest, v.addr);
    assert.equal(network.coreChain, v.network === 'test' ? 'testnet4' : v.network, v.addr);
    assert.ok(isStandardScript(script));
    assert.equal(scriptToAddress(script, network), v.addr);
    // bech32 addresses may also be written in upper case
    if (/^(bc|tb|bcrt)1/.test(v.addr)) assert.equal(toHex(addressToScript(v.addr.toUpperCase()).script), v.dest);
  }
});

test('BIP173/BIP350 and base58 addresses of every kind and network', () => {
  const cases: [string, string, string][] = [
    // BIP350 test vectors (valid)
    ['BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', '0014751e76e8199196d454941c45d1b3a323f1433bd6', 'main'],
    ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', '00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262', 'testnet4'],
    [
      'bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y',
      '5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a323f1433bd6',
      'main',
    ],
    ['BC1SW50QGDZ25J', '6002751e', 'main'],
    ['bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs', '5210751e76e8199196d454941c45d1b3a323', 'main'],
    ['tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c', '5120000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433', 'testnet4'],
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', '512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798', 'main'],
    // base58: testnet p2pkh (m/n) and p2sh (2) read as testnet4
    ['mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', '76a914243f1394f44554f4ce3fd68649c19adc483ce92488ac', 'testnet4'],
    ['2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc', 'a9144e9f39ca4688ff102128ea4ccda34105324305b087', 'testnet4'],
  ];
  for (const [addr, script, network] of cases) {
    const r = addressToScript(addr);
    assert.equal(toHex(r.script), script, addr);
    assert.equal(r.network.coreChain, network, addr);
  }
});

test('invalid addresses are INVALID_INPUT naming the defect', () => {
  const bad: [string, RegExp][] = [
    ['', /base58/],
    ['tc1qw508d6qejxtdg4y5r3zarvary0c5xw7kg3g4ty', /tried to parse an unknown hrp: tc/], // BIP173: valid bech32, unknown hrp
    ['tc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq5zuyut', /unknown hrp: tc/],
    ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5', /\(bech32\) address: its checksum or format does not match/], // bad checksum
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd', /\(bech32\) address: its checksum or format does not match/], // v1 with bech32 checksum
    ['BC1S0XLXVLHEMJA6C4DQV22UAPCTQUPFHLXM9H8Z3K2E72Q4K9HCZ7VQ54WELL', /\(bech32\) address: its checksum or format does not match/], // v16 with bech32 checksum
    ['bc1zw508d6qejxtdg4y5r3zarvaryvqyzf3du', /\(bech32\) address: its checksum or format does not match/], // invalid padding
    ['tb1q0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq24jc47', /\(bech32\) address: its checksum or format does not match/], // v0 with bech32m
    ['bc1gmk9yu', /\(bech32\) address: its checksum or format does not match/], // empty data
    ['BC1QR508D6QEJXTDG4Y5R3ZARVARYV98GJ9P', /\(bech32\) address: its checksum or format does not match/], // v0 16-byte program
    ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sL5k7', /\(bech32\) address/], // mixed case
    ['1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3', /base58 error/], // bad checksum
    ['LKDxGDJq5fF4FohAB8zJH24mDDNHDNtqsE', /base58 prefix: unknown version byte 48/],
    ['111111111111111111117K4nzc', /base58 data: 20 bytes, expected 21/],
  ];
  for (const [addr, re] of bad)
    assert.throws(
      () => addressToScript(addr),
      (e: unknown) => invalidInput(e) && re.test((e as Error).message),
      addr,
    );
});

test('network validity per bitcoind chain name, as rust-bitcoin is_valid_for_network', () => {
  const tb = 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7';
  const bcrt = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080';
  const m = 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn';
  const bc = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
  const table: [string, string[]][] = [
    [bc, ['main']],
    [tb, ['test', 'testnet4', 'signet']],
    [bcrt, ['regtest']],
    [m, ['test', 'testnet4', 'signet', 'regtest']],
  ];
  for (const [addr, valid] of table)
    for (const chain of ['main', 'test', 'testnet4', 'signet', 'regtest'] as const)
      assert.equal(isAddressValidFor(addr, chain), valid.includes(chain), `${addr} on ${chain}`);
  assert.equal(isAddressValidFor('nonsense', 'main'), false);
  assert.equal(decodeAddress(bc.toUpperCase()).canonical, bc);
});

test('standard scripts: what Address::from_script accepts', () => {
  const yes = [
    '76a914' + '00'.repeat(20) + '88ac',
    'a914' + '00'.repeat(20) + '87',
    '0014' + '00'.repeat(20),
    '0020' + '00'.repeat(32),
    '5120' + '00'.repeat(32),
    '6002751e',
    '5228' + '00'.repeat(40),
  ];
  const no = [
    '',
    '6a',
    '0015' + '00'.repeat(21),
    '0001ff',
    '5129' + '00'.repeat(41),
    '4f02aaaa',
    '5120' + '00'.repeat(31),
    '76a914' + '00'.repeat(20) + '88ad',
    '00',
  ];
  for (const s of yes) assert.ok(isStandardScript(fromHex(s)) && isStandardScriptFor(fromHex(s), BITCOIN_NETWORKS.regtest), s);
  for (const s of no) assert.ok(!isStandardScript(fromHex(s)), s);
  assert.equal(scriptToAddress(fromHex('6a'), BITCOIN_NETWORKS.mainnet), undefined);
  assert.equal(
    scriptToAddress(fromHex('0014751e76e8199196d454941c45d1b3a323f1433bd6'), BITCOIN_NETWORKS.regtest),
    'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080',
  );
  assert.equal(scriptToAddress(fromHex('76a914243f1394f44554f4ce3fd68649c19adc483ce92488ac'), BITCOIN_NETWORKS.testnet4), 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn');
});

test("the -chain names are the one Network type's: every network has one, every name a network", () => {
  const core = new Set(Object.values(BITCOIN_NETWORKS).map((n) => n.coreChain));
  assert.deepEqual([...BITCOIN_CHAIN_NAMES].sort(), [...core].sort());
});
