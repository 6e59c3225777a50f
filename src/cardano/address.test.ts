import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bech32, bech32m } from '@scure/base';
import { cardanoAddressBytes, cardanoProxyAddressForApps } from '../chains/cardano-dest.js';
import { readSharedJson, readSharedText, sharedOrSkip } from '../testing/shared.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { appFromString } from '../model/primitives.js';
import { parseCardanoTx, parseOutputs } from './tx.js';

const invalidInput = (e: unknown) => e instanceof CharmsError && e.code === 'INVALID_INPUT' && !e.message.includes('\n');

// CIP-19 test vectors (payment key 9493…2c8e, stake key 337b…7251, script c37b…542f, pointer (2498243, 27, 3))
const CIP19: [string, string][] = [
  [
    'addr1qx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer3n0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgse35a3x',
    '019493315cd92eb5d8c4304e67b7e16ae36d61d34502694657811a2c8e337b62cfff6403a06a3acbc34f8c46003c69fe79a3628cefa9c47251',
  ],
  [
    'addr1z8phkx6acpnf78fuvxn0mkew3l0fd058hzquvz7w36x4gten0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgs9yc0hh',
    '11c37b1b5dc0669f1d3c61a6fddb2e8fde96be87b881c60bce8e8d542f337b62cfff6403a06a3acbc34f8c46003c69fe79a3628cefa9c47251',
  ],
  [
    'addr1yx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzerkr0vd4msrxnuwnccdxlhdjar77j6lg0wypcc9uar5d2shs2z78ve',
    '219493315cd92eb5d8c4304e67b7e16ae36d61d34502694657811a2c8ec37b1b5dc0669f1d3c61a6fddb2e8fde96be87b881c60bce8e8d542f',
  ],
  [
    'addr1x8phkx6acpnf78fuvxn0mkew3l0fd058hzquvz7w36x4gt7r0vd4msrxnuwnccdxlhdjar77j6lg0wypcc9uar5d2shskhj42g',
    '31c37b1b5dc0669f1d3c61a6fddb2e8fde96be87b881c60bce8e8d542fc37b1b5dc0669f1d3c61a6fddb2e8fde96be87b881c60bce8e8d542f',
  ],
  ['addr1gx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer5pnz75xxcrzqf96k', '419493315cd92eb5d8c4304e67b7e16ae36d61d34502694657811a2c8e8198bd431b03'],
  ['addr128phkx6acpnf78fuvxn0mkew3l0fd058hzquvz7w36x4gtupnz75xxcrtw79hu', '51c37b1b5dc0669f1d3c61a6fddb2e8fde96be87b881c60bce8e8d542f8198bd431b03'],
  ['addr1vx2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzers66hrl8', '619493315cd92eb5d8c4304e67b7e16ae36d61d34502694657811a2c8e'],
  ['addr1w8phkx6acpnf78fuvxn0mkew3l0fd058hzquvz7w36x4gtcyjy7wx', '71c37b1b5dc0669f1d3c61a6fddb2e8fde96be87b881c60bce8e8d542f'],
  ['stake1uyehkck0lajq8gr28t9uxnuvgcqrc6070x3k9r8048z8y5gh6ffgw', 'e1337b62cfff6403a06a3acbc34f8c46003c69fe79a3628cefa9c47251'],
  ['stake178phkx6acpnf78fuvxn0mkew3l0fd058hzquvz7w36x4gtcccycj5', 'f1c37b1b5dc0669f1d3c61a6fddb2e8fde96be87b881c60bce8e8d542f'],
  [
    'addr_test1qz2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer3n0d3vllmyqwsx5wktcd8cc3sq835lu7drv2xwl2wywfgs68faae',
    '009493315cd92eb5d8c4304e67b7e16ae36d61d34502694657811a2c8e337b62cfff6403a06a3acbc34f8c46003c69fe79a3628cefa9c47251',
  ],
  ['addr_test1gz2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzer5pnz75xxcrdw5vky', '409493315cd92eb5d8c4304e67b7e16ae36d61d34502694657811a2c8e8198bd431b03'],
  ['addr_test1vz2fxv2umyhttkxyxp8x0dlpdt3k6cwng5pxj3jhsydzerspjrlsz', '609493315cd92eb5d8c4304e67b7e16ae36d61d34502694657811a2c8e'],
  ['stake_test1uqehkck0lajq8gr28t9uxnuvgcqrc6070x3k9r8048z8y5gssrtvn', 'e0337b62cfff6403a06a3acbc34f8c46003c69fe79a3628cefa9c47251'],
];

test('base, pointer, enterprise and reward addresses (CIP-19), mainnet and testnet, give their raw bytes', () => {
  for (const [addr, hex] of CIP19) {
    assert.equal(toHex(cardanoAddressBytes(addr)), hex, addr);
    assert.equal(toHex(cardanoAddressBytes(addr.toUpperCase())), hex, `${addr} upper case`);
  }
  // bech32m checksums are accepted too (the reference's bech32 crate accepts both)
  const m = bech32m.encode('addr', bech32m.toWords(fromHex(CIP19[6]![1])), 1023);
  assert.equal(toHex(cardanoAddressBytes(m)), CIP19[6]![1]);
});

test('util dest --addr vectors', (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson('vectors', 'cardano-script-vectors.json');
  assert.ok(v.util_dest_addr.length >= 1);
  for (const a of v.util_dest_addr) assert.equal(toHex(cardanoAddressBytes(a.addr)), a.dest);
});

test('util dest --apps: the proxy address equals output 0 of the real transaction, in any app order', (t) => {
  if (!sharedOrSkip(t)) return;
  const v = readSharedJson('vectors', 'cardano-script-vectors.json');
  const apps = v.proxy_vector_from_chain.apps.map((s: string) => appFromString(s));
  const got = toHex(cardanoProxyAddressForApps(apps));
  assert.equal(got, v.proxy_vector_from_chain.expected_output_address);
  const tx = parseCardanoTx(fromHex(readSharedJson('vectors', 'cardano-v11-tx.json').cardano));
  assert.equal(toHex(parseOutputs(tx)[0]!.address), got);
  const finalityTx = parseCardanoTx(
    fromHex(readSharedText('vectors', 'chain', '712fcb00421d163794c22eef627c5e49f3d3f19ea95953871f90286e1bf6f66c.cardano.hex').trim()),
  );
  assert.equal(toHex(parseOutputs(finalityTx)[0]!.address), got);
  for (const p of v.proxy_scripts) assert.equal(toHex(cardanoProxyAddressForApps(p.apps.map((s: string) => appFromString(s)))), p.util_dest_apps);
  const many = ['c/' + '11'.repeat(32) + '/' + '22'.repeat(32), 's/' + '33'.repeat(32) + '/' + '44'.repeat(32), ...v.proxy_vector_from_chain.apps].map(
    (s: string) => appFromString(s),
  );
  assert.equal(toHex(cardanoProxyAddressForApps(many)), toHex(cardanoProxyAddressForApps([...many].reverse())));
  assert.notEqual(toHex(cardanoProxyAddressForApps(many)), got);
});

test('anything else is INVALID_INPUT: Byron, Bitcoin, bad checksum, wrong lengths, unknown headers', () => {
  const enc = (hrp: string, hex: string) => bech32.encode(hrp, bech32.toWords(fromHex(hex)), 1023);
  const bad = [
    '',
    'addr1',
    'Ae2tdPwUPEZFRbyhz3cpfC2CumGzNkFBN2L42rcUc2yjQpEkxDbkPodpMAi', // Byron (base58)
    'DdzFFzCqrhsrcTVhLygT24QwTnNqQqQ8mZrq5jykUzMveU26sxaH529kMpo7VhPuivgr4ofnpTj2UsZsq9t2jkS5GQyqeL4CATkNKZB2', // Byron
    'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', // Bitcoin P2WPKH
    'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3', // P2WSH
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', // P2TR
    'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx',
    CIP19[0]![0].slice(0, -1) + (CIP19[0]![0].endsWith('x') ? 'y' : 'x'), // checksum
    CIP19[0]![0].replace('addr1qx2', 'addr1qx3'),
    'addr1' + CIP19[6]![0].slice(5).toUpperCase(), // mixed case
    enc('addr', '61' + '00'.repeat(27)), // enterprise, 27-byte hash
    enc('addr', '01' + '00'.repeat(55)), // base, 55 bytes
    enc('addr', '01' + '00'.repeat(57)), // base, 58 bytes
    enc('stake', 'e1' + '00'.repeat(29)), // reward, 30 bytes
    enc('addr', '41' + '00'.repeat(28) + '8181'), // pointer, truncated varint
    enc('addr', '41' + '00'.repeat(28) + '010203ff'), // pointer, trailing garbage (unterminated varint)
    enc('addr', '82' + '00'.repeat(40)), // header type 8 (Byron) in bech32
    enc('addr', '91' + '00'.repeat(28)), // header type 9
    enc('addr', 'c1' + '00'.repeat(28)), // header type 12
  ];
  for (const a of bad) assert.throws(() => cardanoAddressBytes(a), invalidInput, a);
});
