import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_START_HEIGHTS, startHeightFor } from './start-height.js';

test('a new index starts below the network’s first charms block by default, 0 on regtest', () => {
  assert.equal(startHeightFor('mainnet'), 840_000);
  assert.equal(startHeightFor('testnet4'), 39_550);
  assert.equal(startHeightFor('signet'), 208_800);
  assert.equal(startHeightFor('testnet'), 2_873_500);
  assert.equal(startHeightFor('regtest'), 0);
  assert.deepEqual(Object.keys(DEFAULT_START_HEIGHTS).sort(), ['mainnet', 'regtest', 'signet', 'testnet', 'testnet4']);
});

test('an explicit --start-height wins over the default, 0 included', () => {
  assert.equal(startHeightFor('mainnet', 0), 0);
  assert.equal(startHeightFor('mainnet', 900_000), 900_000);
  assert.equal(startHeightFor('testnet4', 12), 12);
  assert.equal(startHeightFor('regtest', 5), 5);
});
