/**
 * Chain sources from the settings (`SourceConfig`: BITCOIN_RPC_URL with COOKIE or USER/PASSWORD,
 * ESPLORA_URL). The index follows Bitcoin Core when both are set (a local node with REST and
 * ZMQ is the faster, trusted one); the BTC side of the API prefers Esplora, the only one with an
 * address index.
 */
import type { BitcoinNetwork } from '../model/network.js';
import type { BlockSource } from './block-source.js';
import type { SourceConfig } from '../settings/settings.js';
import { rpcNodeFromConfig } from './bitcoin-node.js';
import type { BtcSource } from './btc-source.js';
import { EsploraBlockSource } from './esplora-block-source.js';
import { RpcBlockSource, type RpcBlockSourceOptions } from './rpc-block-source.js';

export interface ChainSourceOptions extends RpcBlockSourceOptions {
  /** The network, when known (Esplora does not say it). */
  network?: BitcoinNetwork;
}

const rpcOf = (c: SourceConfig, o: ChainSourceOptions): RpcBlockSource | undefined => {
  const node = rpcNodeFromConfig(c);
  return node && new RpcBlockSource(node, o);
};

const esploraOf = (c: SourceConfig, o: ChainSourceOptions): EsploraBlockSource | undefined =>
  c.esploraUrl
    ? new EsploraBlockSource(c.esploraUrl, { ...(o.network ? { network: o.network } : {}), ...(c.timeoutMs ? { timeoutMs: c.timeoutMs } : {}) })
    : undefined;

/** The block source the index follows: Bitcoin Core RPC when configured, else Esplora, else none. */
export function blockSourceFromConfig(c: SourceConfig, o: ChainSourceOptions = {}): (BlockSource & BtcSource) | undefined {
  return rpcOf(c, o) ?? esploraOf(c, o);
}

/** The BTC side of the wallet API: Esplora when configured (it has an address index), else Bitcoin Core, else none. */
export function btcSourceFromConfig(c: SourceConfig, o: ChainSourceOptions = {}): BtcSource | undefined {
  return esploraOf(c, o) ?? rpcOf(c, o);
}
