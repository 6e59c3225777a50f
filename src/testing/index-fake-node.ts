/**
 * A real charms index (SQLite) over the fake Bitcoin node, for the API and wallet-page tests: the
 * vector blocks mined (all but `except`), followed through the node's Esplora facade, with
 * Esplora as the BTC source unless `withBtc` is false. The follower is driven by the test
 * (`svc.follower.syncOnce()`); one sync is done.
 */
import { blockSourceFromConfig, btcSourceFromConfig } from '../sources/chain-sources.js';
import { startIndexService, type IndexService } from '../indexer/service.js';
import { FakeBitcoind } from './fake-bitcoind.js';
import { bitcoinVectors, VECTOR_BLOCKS } from './index-vectors.js';
import type { TestEngine } from './index-stores.js';
import type { SourceConfig } from '../settings/settings.js';
import { BITCOIN_NETWORKS } from '../model/network.js';

/** The options every test index service shares: regtest from block 1, loopback, driven by the test. */
export const TEST_INDEX_SERVICE = {
  apiOnly: false,
  mock: false,
  network: 'regtest',
  startHeight: 1,
  version: 'test',
  host: '127.0.0.1',
  port: 0,
  autoStart: false,
} as const;

export interface IndexOverFakeNode {
  fake: FakeBitcoind;
  svc: IndexService;
  port: number;
  close(): Promise<void>;
}

export async function indexOverFakeNode(e: TestEngine, o: { except?: string[]; withBtc?: boolean } = {}): Promise<IndexOverFakeNode> {
  const fake = await FakeBitcoind.start();
  const v = bitcoinVectors();
  for (const names of VECTOR_BLOCKS) fake.mine(names.filter((n) => !(o.except ?? []).includes(n)).map((n) => v.get(n)!.raw));
  const svc = await indexServiceOver(e, { esploraUrl: fake.esploraUrl }, o.withBtc !== false);
  return { fake, svc, port: svc.server.port, close: async () => (await svc.close(), await fake.stop()) };
}

/** A regtest index service from block 1 over the sources `cfg` names (the BTC side too unless `withBtc` is false), synced once. */
export async function indexServiceOver(e: TestEngine, cfg: SourceConfig, withBtc = true): Promise<IndexService> {
  const svc = await startIndexService({
    store: await e.open(await e.newDb()),
    source: blockSourceFromConfig(cfg, { network: BITCOIN_NETWORKS.regtest }),
    btcSource: withBtc ? btcSourceFromConfig(cfg, { network: BITCOIN_NETWORKS.regtest }) : undefined,
    ...TEST_INDEX_SERVICE,
  });
  await svc.follower!.syncOnce();
  return svc;
}
