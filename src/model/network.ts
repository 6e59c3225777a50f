/**
 * The networks charms-ts knows, one type for the whole project (as ord's `chain.rs`): which chain,
 * the names operators and nodes use for it, how its addresses are told apart, and where a new
 * index starts reading. Browser-safe, no I/O.
 *
 * Bitcoin: the names are bitcoind's `getblockchaininfo.chain` spellings mapped to the ones our
 * CLI takes (`mainnet`, `testnet4`, …); `coreChain` is the `-chain` argument the reference derives
 * from an address (`main`, `test`, `testnet4`, `signet`, `regtest`). Cardano: `networkId` is the
 * address header's network nibble (CIP-19), `networkMagic` the node's handshake magic.
 */
export type Chain = 'bitcoin' | 'cardano';

export type BitcoinNetworkName = 'mainnet' | 'testnet' | 'testnet4' | 'signet' | 'regtest';
export type CardanoNetworkName = 'mainnet' | 'preprod' | 'preview';

interface NetworkBase {
  /** `bitcoin:mainnet`, `cardano:preprod`: unique across chains (database meta, logs). */
  readonly id: string;
  readonly chain: Chain;
  /** Whether real value moves on it (mainnet), for warnings and mismatch checks. */
  readonly mainnet: boolean;
}

export interface BitcoinNetwork extends NetworkBase {
  readonly chain: 'bitcoin';
  readonly name: BitcoinNetworkName;
  /** bitcoind's `-chain` name (rust-bitcoin's `Network::to_core_arg`). */
  readonly coreChain: 'main' | 'test' | 'testnet4' | 'signet' | 'regtest';
  /** Segwit human-readable part. */
  readonly hrp: 'bc' | 'tb' | 'bcrt';
  /** Base58 prefix family (p2pkh/p2sh version bytes 0x00/0x05 or 0x6f/0xc4). */
  readonly base58: 'main' | 'test';
  /** The first block a new index reads by default (see indexer/start-height.ts for sources). */
  readonly defaultStartHeight: number;
}

export interface CardanoNetwork extends NetworkBase {
  readonly chain: 'cardano';
  readonly name: CardanoNetworkName;
  /** Shelley address network id (header low nibble): 1 mainnet, 0 testnets. */
  readonly networkId: 0 | 1;
  readonly networkMagic: number;
  /** Shelley payment address hrp (CIP-5). */
  readonly hrp: 'addr' | 'addr_test';
}

export type Network = BitcoinNetwork | CardanoNetwork;

const bitcoin = (name: BitcoinNetworkName, coreChain: BitcoinNetwork['coreChain'], hrp: BitcoinNetwork['hrp'], defaultStartHeight: number): BitcoinNetwork => ({
  id: `bitcoin:${name}`,
  chain: 'bitcoin',
  name,
  mainnet: name === 'mainnet',
  coreChain,
  hrp,
  base58: name === 'mainnet' ? 'main' : 'test',
  defaultStartHeight,
});

const cardano = (name: CardanoNetworkName, networkMagic: number): CardanoNetwork => ({
  id: `cardano:${name}`,
  chain: 'cardano',
  name,
  mainnet: name === 'mainnet',
  networkId: name === 'mainnet' ? 1 : 0,
  networkMagic,
  hrp: name === 'mainnet' ? 'addr' : 'addr_test',
});

/** Start heights: blocks mined before the protocol existed (sources in indexer/start-height.ts). */
export const BITCOIN_NETWORKS: Readonly<Record<BitcoinNetworkName, BitcoinNetwork>> = {
  mainnet: bitcoin('mainnet', 'main', 'bc', 840_000),
  testnet: bitcoin('testnet', 'test', 'tb', 2_873_500),
  testnet4: bitcoin('testnet4', 'testnet4', 'tb', 39_550),
  signet: bitcoin('signet', 'signet', 'tb', 208_800),
  regtest: bitcoin('regtest', 'regtest', 'bcrt', 0),
};

/** Magics: cardano-node's published configurations (mainnet 764824073, preprod 1, preview 2). */
export const CARDANO_NETWORKS: Readonly<Record<CardanoNetworkName, CardanoNetwork>> = {
  mainnet: cardano('mainnet', 764_824_073),
  preprod: cardano('preprod', 1),
  preview: cardano('preview', 2),
};

/** The network `name` names on `chain` (CLI `--network`), or undefined. */
export function networkNamed(chain: 'bitcoin', name: string): BitcoinNetwork | undefined;
export function networkNamed(chain: 'cardano', name: string): CardanoNetwork | undefined;
export function networkNamed(chain: Chain, name: string): Network | undefined;
export function networkNamed(chain: Chain, name: string): Network | undefined {
  const table: Readonly<Record<string, Network>> = chain === 'bitcoin' ? BITCOIN_NETWORKS : CARDANO_NETWORKS;
  return Object.hasOwn(table, name) ? table[name] : undefined;
}

/** A Bitcoin network by bitcoind's `-chain` name (`main`, `test`, …), as the reference maps it. */
export function bitcoinNetworkOfCoreChain(coreChain: string): BitcoinNetwork | undefined {
  return Object.values(BITCOIN_NETWORKS).find((n) => n.coreChain === coreChain);
}
