import { test } from 'node:test';
import assert from 'node:assert/strict';
import { charmsFee, feeScriptFor, parseFeeSettings } from './fee-settings.js';
import { readSharedJson, sharedOrSkip } from '../testing/shared.js';
import { toHex } from '../util/bytes.js';
import { CharmsError } from '../errors.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

const BC = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const TB = 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7';
const BCRT = 'bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080';
const M = 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn';
const config = (re: RegExp) => (e: unknown) => e instanceof CharmsError && e.code === 'CONFIG' && re.test(e.message);
const yaml = (bitcoin: string, rest = 'fee_rate: 1000\nfee_base: 500\n') => `fee_addresses:\n  bitcoin:\n${bitcoin}${rest}`;

test('the build vectors fee settings: 2 000 000 cycles cost 2500 sats, paid to the testnet4 script', (t) => {
  if (!sharedOrSkip(t)) return;
  const c = readSharedJson('vectors', 'bitcoin-tx-build-vectors.json').cases.find((x: any) => x.fee_settings_yaml);
  const s = parseFeeSettings(c.fee_settings_yaml);
  assert.equal(charmsFee(s, 2_000_000n), BigInt(c.charms_fee_sats));
  assert.equal(toHex(feeScriptFor(s, BITCOIN_NETWORKS.testnet4)!), '00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262');
  assert.equal(feeScriptFor(s, BITCOIN_NETWORKS.mainnet), undefined);
});

test('fee = cycles × fee_rate / 10^6 (integer) + fee_base; u64 overflow is an error', () => {
  const s = parseFeeSettings(yaml(`    main: ${BC}\n`, 'fee_rate: 1000\nfee_base: 500\n'));
  assert.equal(charmsFee(s, 0n), 500n);
  assert.equal(charmsFee(s, 999n), 500n);
  assert.equal(charmsFee(s, 1000n), 501n);
  assert.equal(charmsFee(s, 2_000_000n), 2500n);
  const big = parseFeeSettings(yaml(`    main: ${BC}\n`, 'fee_rate: 18446744073709551615\nfee_base: 0\n'));
  assert.equal(charmsFee(big, 1n), 18446744073709n);
  assert.throws(
    () => charmsFee(big, 2n),
    (e: unknown) => e instanceof CharmsError && /overflows u64/.test(e.message),
  );
});

test('every bitcoind chain name with an address valid for it; lookups by change network', () => {
  const s = parseFeeSettings(
    yaml(
      `    main: ${BC}\n    test: ${TB}\n    testnet4: ${TB}\n    signet: ${M}\n    regtest: ${BCRT}\n  cardano:\n    mainnet: addr1xyz\n`,
      'fee_rate: 1000\nfee_base: 500\nunknown_field: ignored\n',
    ),
  );
  assert.deepEqual([...s.bitcoin.keys()], ['main', 'test', 'testnet4', 'signet', 'regtest']);
  assert.equal(toHex(feeScriptFor(s, BITCOIN_NETWORKS.regtest)!), '0014751e76e8199196d454941c45d1b3a323f1433bd6');
  assert.equal(s.cardano.get('mainnet'), 'addr1xyz');
  // base58 test addresses are valid for regtest too
  assert.ok(parseFeeSettings(yaml(`    regtest: ${M}\n`)).bitcoin.has('regtest'));
});

test('invalid fee settings are CONFIG errors naming the field', () => {
  assert.throws(() => parseFeeSettings('fee_addresses: {cardano: {mainnet: x}}\nfee_rate: 1\nfee_base: 1\n'), config(/bitcoin is required/));
  assert.throws(() => parseFeeSettings(yaml(`    main: ${TB}\n`)), config(/bitcoin\.main: address .* is not valid for main/));
  assert.throws(() => parseFeeSettings(yaml(`    regtest: ${TB}\n`)), config(/not valid for regtest/));
  assert.throws(() => parseFeeSettings(yaml(`    testnet4: ${BCRT}\n`)), config(/not valid for testnet4/));
  assert.throws(() => parseFeeSettings(yaml(`    mainnet: ${BC}\n`)), config(/`mainnet` is not a bitcoind -chain name/));
  assert.throws(() => parseFeeSettings(yaml(`    main: not-an-address\n`)), config(/bitcoin\.main: invalid Bitcoin address/));
  assert.throws(() => parseFeeSettings(yaml(`    main: 12\n`)), config(/expected an address string/));
  assert.throws(() => parseFeeSettings(yaml(`    main: ${BC}\n`, 'fee_rate: 1\n')), config(/missing field `fee_base`/));
  assert.throws(() => parseFeeSettings(yaml(`    main: ${BC}\n`, 'fee_rate: -1\nfee_base: 1\n')), config(/fee_rate: expected an integer/));
  assert.throws(() => parseFeeSettings(yaml(`    main: ${BC}\n`, 'fee_rate: 1.5\nfee_base: 1\n')), config(/fee_rate: expected an integer .* found a float/));
  assert.throws(() => parseFeeSettings(yaml(`    main: ${BC}\n`, 'fee_rate: 18446744073709551616\nfee_base: 1\n')), config(/fee_rate/));
  assert.throws(() => parseFeeSettings(yaml(`    main: ${BC}\n`, 'fee_rate: 1\nfee_base: 1\nfee_base: 2\n')), config(/duplicate key `fee_base`/));
  assert.throws(() => parseFeeSettings('fee_addresses:\n  dogecoin: {}\n  bitcoin: {}\nfee_rate: 1\nfee_base: 1\n'), config(/unknown chain `dogecoin`/));
  assert.throws(() => parseFeeSettings('- 1\n'), config(/top level: expected a map/));
  assert.throws(() => parseFeeSettings('a: [\n'), config(/^fee settings: invalid YAML: /));
});
