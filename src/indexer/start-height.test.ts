import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BITCOIN_NETWORKS, CARDANO_NETWORKS } from '../model/network.js';
import { slotTime } from './cardano-follow.js';
import { CARDANO_DEFAULT_START_POINTS, startHeightFor } from './start-height.js';

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

test('the Cardano default start points are blocks made before the protocol was begun (2024-08-25)', () => {
  assert.deepEqual(Object.keys(CARDANO_DEFAULT_START_POINTS).sort(), Object.keys(CARDANO_NETWORKS).sort());
  const begun = Date.UTC(2024, 7, 25) / 1000;
  const dates: Record<string, string> = {};
  for (const [name, p] of Object.entries(CARDANO_DEFAULT_START_POINTS)) {
    const t = slotTime(CARDANO_NETWORKS[name as keyof typeof CARDANO_NETWORKS], p.slot);
    assert.ok(t < begun, name);
    assert.match(p.id, /^[0-9a-f]{64}$/);
    dates[name] = new Date(t * 1000).toISOString().slice(0, 10);
  }
  // the dates the comment in start-height.ts gives
  assert.deepEqual(dates, { mainnet: '2022-09-22', preprod: '2024-08-23', preview: '2024-07-31' });
});
