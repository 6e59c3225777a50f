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
import type { BitcoinNetwork, CardanoNetworkName } from '../model/network.js';

/**
 * The first block a new index reads: `explicit` (`--start-height`) when given, else the network's
 * default (`defaultStartHeight` in model/network.ts: the heights above).
 */
export function startHeightFor(network: BitcoinNetwork, explicit?: number): number {
  return explicit ?? network.defaultStartHeight;
}

/**
 * Where a new Cardano index starts when neither `--start-point` nor `--start-slot` is given: the
 * point (slot and block hash: Ogmios intersects on both) of a block made before 2024-08-25, the
 * same rule as above. Each is the last block of an era as Ogmios' documentation publishes them
 * (CardanoSolutions/ogmios `docs/content/mini-protocols/local-chain-sync.md`, "Points of
 * interest", at 435189a), dated by the network's slot clock (cardano-follow.ts `slotTime`):
 * - mainnet: the last Alonzo block, height 7 791 698, slot 72 316 796 (2022-09-22). The last
 *   Babbage block (slot 133 660 799) is of 2024-09-01, after the protocol was begun: not used.
 * - preprod: the last Babbage block, height 2 620 289, slot 68 774 372 (2024-08-23).
 * - preview: the last Babbage block, height 2 344 008, slot 55 814 394 (2024-07-31).
 */
export const CARDANO_DEFAULT_START_POINTS: Readonly<Record<CardanoNetworkName, { slot: number; id: string; height: number }>> = {
  mainnet: { slot: 72_316_796, id: 'c58a24ba8203e7629422a24d9dc68ce2ed495420bf40d9dab124373655161a20', height: 7_791_698 },
  preprod: { slot: 68_774_372, id: '36f5b4a370c22fd4a5c870248f26ac72c0ac0ecc34a42e28ced1a4e15136efa4', height: 2_620_289 },
  preview: { slot: 55_814_394, id: 'bdd4baa2c81d0500a695f836332193ea06c2ce364e585057142220fc0782144c', height: 2_344_008 },
};
