/**
 * Where a new index starts reading when `--start-height` is not given: a height at or below the
 * network's first charms block, so that the default never skips a charms transaction, yet does
 * not read years of blocks that cannot hold one.
 *
 * No charms transaction is older than the protocol: its reference implementation
 * (CharmsDev/charms) was begun on 2024-08-25 and first released (v0.1.0, protocol version 0) on
 * 2024-12-12. Each default is a block mined before 2024-08-25, named with its height in a public
 * source:
 * - mainnet 840 000: the fourth halving block (2024-04-20).
 * - testnet4 39 550, signet 208 800, testnet (testnet3) 2 873 500: the `defaultAssumeValid`
 *   blocks of Bitcoin Core 28.0's chain parameters (their `chainTxData` times are 2024-08-14):
 *   testnet4 000000005be348057db991fa5d89fe7c4695b667cfb311391a8db374b6f681fd, signet
 *   0000014aad1d58dddcb964dd749b073374c6306e716b22f573a2efe68d414539, testnet3
 *   000000000000000465b1a66c9f386308e8c75acef9201f3f577811da09fc90ad.
 * - regtest 0: a local chain.
 * Not used: the Charms explorer's starts (CharmsDev/charms-explorer: testnet4 57 604 as
 * `GENESIS_BLOCK_HEIGHT`, mainnet 912 774 "Pruned block start"). The mainnet one is a limit of a
 * pruned node; the testnet4 one falls, between Core's dated testnet4 blocks 39 550 (2024-08-14)
 * and 72 600 (2025-03-04, Core 29.0), around December 2024 — the month of the first release —
 * so nothing shows that no charms transaction precedes it.
 */
import type { BitcoinNetwork } from '../model/network.js';

/**
 * The first block a new index reads: `explicit` (`--start-height`) when given, else the network's
 * default (`defaultStartHeight` in model/network.ts: the heights above).
 */
export function startHeightFor(network: BitcoinNetwork, explicit?: number): number {
  return explicit ?? network.defaultStartHeight;
}
