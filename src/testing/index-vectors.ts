/**
 * Chains for the indexer's tests, built from the real vector transactions in
 * ../shared/vectors/chain (see its INDEX.md) plus fabricated spends, and a replay helper: the
 * state an index reaches from scratch over a chain's final best chain.
 */
import { readdirSync } from 'node:fs';
import { verifySpells } from '../verify/index.js';
import { readSharedText, sharedPath } from './shared.js';
import { MemoryChain, plainTx, txidOf } from './memory-chain.js';
import { Follower } from '../indexer/follower.js';
import { librarySpellCheck } from '../indexer/block-write.js';
import { dumpIndex } from './index-dump.js';
import type { IndexWriter } from '../indexer/store.js';
import type { TestEngine } from './index-stores.js';

export interface VectorTx {
  name: string;
  txid: string;
  raw: Uint8Array;
}

/** Every Bitcoin vector, by file name (txid or neg-N). */
export function bitcoinVectors(): Map<string, VectorTx> {
  const dir = sharedPath('vectors', 'chain');
  const out = new Map<string, VectorTx>();
  for (const f of readdirSync(dir)
    .filter((x) => x.endsWith('.bitcoin.hex'))
    .sort()) {
    const raw = Uint8Array.from(Buffer.from(readSharedText('vectors', 'chain', f).trim(), 'hex'));
    const name = f.replace('.bitcoin.hex', '');
    out.set(name.slice(0, 8), { name, txid: txidOf(raw), raw });
  }
  return out;
}

/** The oracle: which vectors carry a spell the library verifies (non-mock unless `mock`). */
export function verifiedByLibrary(txs: VectorTx[], mock = false): Set<string> {
  const v = verifySpells(
    txs.map((t) => ({ bitcoin: t.raw })),
    mock,
  );
  return new Set(txs.filter((_, i) => v[i]!.ok).map((t) => t.txid));
}

/** Groups of vector txs mined one group per block (all vectors, in a fixed order). */
export const VECTOR_BLOCKS: string[][] = [
  ['1acee7fb', '9c048eca', '1a34811c'],
  ['2efcde0d', '8d70833a', '7269cf1b', '28355906', '4125a400', '0d4fb0b0'],
  ['55777ba2', 'aea10a1e', 'b84e628a', '86081de9', '74ea380c', 'fccc3522', 'neg-1', 'neg-2', 'neg-3', 'neg-4', 'neg-5'],
  ['1dc0a4ca', '88690370', 'acc8e739', 'd8fa4cda', 'f0e7de06'],
];

/** A chain of the vector blocks on top of genesis (height 1..4), without the `except` ones. */
export function vectorChain(v = bitcoinVectors(), except: string[] = []): MemoryChain {
  const c = new MemoryChain();
  for (const names of VECTOR_BLOCKS) c.mine(names.filter((n) => !except.includes(n)).map((n) => v.get(n)!.raw));
  return c;
}

const P2TR = (b: number) => Uint8Array.from([0x51, 0x20, ...new Array(32).fill(b)]);
/** A spell-less transaction spending `txid:vout` (burns its charms), unique by `salt`. */
export const burnTx = (txid: string, vout: number, salt: number): Uint8Array =>
  plainTx([{ txid, vout }], [{ script: P2TR(salt & 0xff), sats: 1000n + BigInt(salt) }], salt);

/** The dump an index reaches by following `chain`'s current best chain from scratch, one block at a time. */
export async function replayDump(e: TestEngine, chain: MemoryChain, o: { mock?: boolean; startHeight?: number } = {}): Promise<string> {
  const store: IndexWriter = await e.open(await e.newDb(), { mock: o.mock ?? false });
  try {
    // the straightforward way: one block fetched, checked and committed at a time
    const f = new Follower(store, chain, { startHeight: o.startHeight ?? 1, check: librarySpellCheck(o.mock ?? false), fetchAhead: 1, commitBlocks: 1 });
    await f.syncOnce();
    if (f.status.error) throw new Error(`replay failed: ${f.status.error.message}`);
    return await dumpIndex(store);
  } finally {
    await store.close();
  }
}

/**
 * The crash test's chain (deterministic: the same blocks in every process): the vector blocks,
 * then `n` blocks of burns and plain payments; `reorg()` replaces the top 5 blocks by 6 others.
 */
export function crashChain(n = 120): { chain: MemoryChain; reorg: () => void } {
  const v = bitcoinVectors();
  const chain = vectorChain(v);
  const charmTxs = [...v.values()].map((x) => x.txid);
  let salt = 0;
  const block = (k: number) => {
    const txs: Uint8Array[] = [];
    for (let i = 0; i < 8; i++) {
      salt++;
      txs.push(
        i === 0 && k % 7 === 0
          ? burnTx(charmTxs[Math.floor(k / 7) % charmTxs.length]!, k % 3, salt)
          : plainTx([{ txid: salt.toString(16).padStart(64, '0'), vout: i }], [{ script: P2TR(i), sats: BigInt(salt) }]),
      );
    }
    return txs;
  };
  for (let k = 0; k < n; k++) chain.mine(block(k));
  return {
    chain,
    reorg: () =>
      void chain.reorg(
        5,
        Array.from({ length: 6 }, (_, i) => block(1000 + i * 7)),
      ),
  };
}
