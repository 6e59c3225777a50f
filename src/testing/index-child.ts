/**
 * A child indexer for the crash test (`kill -9` at random points): builds the deterministic
 * crash-test chain, follows it into the database named by argv[2], then reorganises it and
 * follows again; prints `applied <height>` after each committed block and `done` when it got to the end.
 */
import { openIndexStore } from '../indexer/open.js';
import { Follower } from '../indexer/follower.js';
import { librarySpellCheck } from '../indexer/block-write.js';
import { crashChain } from './index-vectors.js';

const db = process.argv[2]!;
const store = await openIndexStore(db, { mode: 'writer', network: 'regtest', mock: false, startHeight: 1 });
const { chain, reorg } = crashChain();
// tell the parent how far it got, so that kills land mid-sync (applyBlock goes through applyBlocks)
const apply = store.applyBlocks.bind(store);
store.applyBlocks = async (bs) => {
  await apply(bs);
  for (const b of bs) process.stdout.write(`applied ${b.height}\n`);
};
// blocks fetched ahead and committed several per transaction (the initial sync's pipeline)
const f = new Follower(store, chain, { startHeight: 1, check: librarySpellCheck(false), fetchAhead: 3, commitBlocks: 4 });
const sync = async (): Promise<void> => {
  await f.syncOnce();
  if (f.status.error) throw new Error(f.status.error.message);
};
await sync();
reorg();
await sync();
await store.close();
process.stdout.write('done\n');
