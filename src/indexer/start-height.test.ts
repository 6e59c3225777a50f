import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BITCOIN_NETWORKS } from '../model/network.js';
import { startHeightFor } from './start-height.js';

test('a new index starts below the network’s first charms block by default, 0 on regtest', () => {
  const { mainnet, testnet4, signet, testnet, regtest } = BITCOIN_NETWORKS;
  assert.equal(startHeightFor(mainnet), 840_000);
  assert.equal(startHeightFor(testnet4), 39_550);
  assert.equal(startHeightFor(signet), 208_800);
  assert.equal(startHeightFor(testnet), 2_873_500);
  assert.equal(startHeightFor(regtest), 0);
  assert.deepEqual(Object.keys(BITCOIN_NETWORKS).sort(), ['mainnet', 'regtest', 'signet', 'testnet', 'testnet4']);
});

test('an explicit --start-height wins over the default, 0 included', () => {
  assert.equal(startHeightFor(BITCOIN_NETWORKS.mainnet, 0), 0);
  assert.equal(startHeightFor(BITCOIN_NETWORKS.mainnet, 900_000), 900_000);
  assert.equal(startHeightFor(BITCOIN_NETWORKS.testnet4, 12), 12);
  assert.equal(startHeightFor(BITCOIN_NETWORKS.regtest, 5), 5);
});
