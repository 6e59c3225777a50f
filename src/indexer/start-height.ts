/**
 * Where a new index starts reading when `--start-height` is not given: a height at or below the
 * network's first charms block, so that the default never skips a charms transaction, yet does
 * not read years of blocks that cannot hold one.
 *
 * Sources (read 2026-11; the values must stay at or below the first charms block, never above):
 * - mainnet 840 000: the fourth halving block (2024-04-20). No charms transaction can be older:
 *   the protocol's reference implementation (CharmsDev/charms) was started on 2024-08-25 and its
 *   first release, v0.1.0, tagged on 2024-12-12. The explorer's own mainnet start is higher
 *   (912 774 in CharmsDev/charms-explorer `indexer/scripts/set_start_blocks.sh`, commented
 *   "Pruned block start": a limit of its pruned node, not the first charms block), so it is not
 *   used.
 * - testnet4 57 604 (block 00000000338e09eb14a8df7f186c04db96c351b414fc186f4f4eea0c5941c1b2):
 *   the charms explorer's `GENESIS_BLOCK_HEIGHT`/`GENESIS_BLOCK_HASH` for testnet4, from which the
 *   Charms team's indexer reads (`indexer/deploy/set-env-vars.sh`, explorer commit 77c987f).
 * - testnet (testnet3) and signet: no sourced first charms block, so 0 (everything is read).
 * - regtest: 0 (a local chain; its blocks are all new).
 */
import type { BitcoinNetwork } from '../sources/block-source.js';

export const DEFAULT_START_HEIGHTS: Readonly<Record<BitcoinNetwork, number>> = {
  mainnet: 840_000,
  testnet4: 57_604,
  testnet: 0,
  signet: 0,
  regtest: 0,
};

/** The first block a new index reads: `explicit` (`--start-height`) when given, else the network's default. */
export function startHeightFor(network: BitcoinNetwork, explicit?: number): number {
  return explicit ?? DEFAULT_START_HEIGHTS[network];
}
