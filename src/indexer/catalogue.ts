/**
 * The asset catalogue's write side (schema V5 `assets`): what a block or a rollback changes in it,
 * inside the store's transaction of that block or rollback, so that a reader never sees a
 * catalogue of another state than the outputs it describes.
 *
 * An asset is every app seen in a verified spell: an app of one of its charm outputs, or one its
 * spell names (`app_public_inputs`: a contract app without outputs). Its type follows the tag (`t`
 * token, `n` NFT, anything else a dapp); its first block and transaction are where it was first
 * seen; its supply is the sum of its unspent confirmed outputs' amounts (one without an amount,
 * an NFT's, counts 1): exact, kept by deltas (a block adds what it creates and takes what it
 * spends; a rollback does the reverse of the blocks it undoes) instead of a scan of the outputs.
 */
import { spellFromCbor } from '../model/spell.js';
import { appToString } from '../model/primitives.js';
import type { Row } from './driver.js';

/** The store's write transaction, as far as the catalogue uses it (store.ts TxDriver). */
interface TxDriver {
  all(sql: string, params?: unknown[]): Promise<Row[]>;
  run(sql: string, params?: unknown[]): Promise<void>;
}

/** What the catalogue reads of a block the store writes (store.ts BlockWrite). */
interface BlockWrite {
  height: number;
  spellTxs: readonly { txid: string; txIndex: number; spell: Uint8Array }[];
  outputs: readonly { txid: string; txIndex: number; app: string; amount: bigint | null }[];
}

/** An app's asset type, as the explorer names it. */
export const assetTypeOf = (app: string): 'token' | 'nft' | 'dapp' => (app.startsWith('t/') ? 'token' : app.startsWith('n/') ? 'nft' : 'dapp');

const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex');
const big = (v: unknown): bigint => BigInt(v as string | number | bigint);
/** Bound of one `IN (…)` list (SQLite's default variable limit is 32 766). */
const CHUNK = 500;

interface Seen {
  txIndex: number;
  txid: string;
  /** Supply change (created − spent) and outputs created, in this block. */
  delta: bigint;
  created: number;
}

/** The apps a spell names, or none when its CBOR does not decode (it verified: never here). */
function spellApps(cbor: Uint8Array): string[] {
  try {
    return spellFromCbor(cbor).app_public_inputs.map(([a]) => appToString(a));
  } catch {
    return [];
  }
}

async function inChunks(keys: unknown[], each: (part: unknown[], marks: string) => Promise<Row[]>): Promise<Row[]> {
  const out: Row[] = [];
  for (let i = 0; i < keys.length; i += CHUNK) {
    const part = keys.slice(i, i + CHUNK);
    out.push(...(await each(part, part.map(() => '?').join(', '))));
  }
  return out;
}

/** App ids of `apps`, inserting the apps rows of those without one (apps named by spells only). */
async function appIds(tx: TxDriver, apps: string[]): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  const read = async (list: string[]) => {
    for (const r of await inChunks(list, (part, marks) => tx.all(`SELECT id, app FROM apps WHERE app IN (${marks})`, part)))
      ids.set(r.app as string, Number(r.id));
  };
  await read(apps);
  const missing = apps.filter((a) => !ids.has(a));
  for (const a of missing) await tx.run('INSERT INTO apps (app, tag) VALUES (?, ?) ON CONFLICT (app) DO NOTHING', [a, a.split('/')[0]!]);
  if (missing.length > 0) await read(missing);
  return ids;
}

/** Adds `seen`'s deltas to the catalogue (rows of apps new to it inserted at `height`). */
async function apply(tx: TxDriver, height: number, seen: Map<string, Seen>): Promise<void> {
  if (seen.size === 0) return;
  const ids = await appIds(tx, [...seen.keys()]);
  const byId = new Map([...seen].map(([app, s]) => [ids.get(app)!, { app, s }]));
  const have = new Map<number, { supply: bigint; outputs: number }>();
  for (const r of await inChunks([...byId.keys()], (part, marks) => tx.all(`SELECT app_id, supply, outputs FROM assets WHERE app_id IN (${marks})`, part)))
    have.set(Number(r.app_id), { supply: big(r.supply), outputs: Number(r.outputs) });
  for (const [id, { app, s }] of [...byId].sort(([a], [b]) => a - b)) {
    const h = have.get(id);
    if (h) {
      if (s.delta !== 0n || s.created !== 0)
        await tx.run('UPDATE assets SET supply = ?, outputs = ? WHERE app_id = ?', [(h.supply + s.delta).toString(), h.outputs + s.created, id]);
    } else if (s.txid !== '')
      // (an app only spent here is in the catalogue since its first output: never without a row)
      await tx.run('INSERT INTO assets (app_id, asset_type, first_height, first_tx_index, first_txid, supply, outputs) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        id,
        assetTypeOf(app),
        height,
        s.txIndex,
        bytes(s.txid),
        s.delta.toString(),
        s.created,
      ]);
  }
}

const note = (seen: Map<string, Seen>, app: string, txIndex: number, txid: string): Seen => {
  let s = seen.get(app);
  if (!s) seen.set(app, (s = { txIndex, txid, delta: 0n, created: 0 }));
  else if (txIndex < s.txIndex) Object.assign(s, { txIndex, txid });
  return s;
};

/** Whether the catalogue waits for its first fill (a database migrated from before V5): one small read per transaction. */
async function pending(tx: TxDriver): Promise<boolean> {
  return (await tx.all("SELECT value FROM meta WHERE key = 'assets_catalogue'"))[0]?.value === 'pending';
}

/**
 * The whole catalogue from the outputs and spells the index holds (once, for a database migrated
 * from before V5; empty for a new one), then marked filled. Reads every charm output once.
 */
async function fill(tx: TxDriver): Promise<void> {
  const first = new Map<string, { height: number; s: Seen }>();
  const at = (app: string, height: number, txIndex: number, txid: string): Seen => {
    const f = first.get(app);
    if (!f || height < f.height || (height === f.height && txIndex < f.s.txIndex)) {
      const s = { txIndex, txid, delta: f?.s.delta ?? 0n, created: f?.s.created ?? 0 };
      first.set(app, { height, s });
      return s;
    }
    return f.s;
  };
  for (const r of await tx.all('SELECT txid, height, tx_index, spell FROM spell_txs'))
    for (const app of spellApps(new Uint8Array(r.spell as Uint8Array)))
      at(app, Number(r.height), Number(r.tx_index), Buffer.from(r.txid as Uint8Array).toString('hex'));
  for (const r of await tx.all(
    'SELECT a.app, co.txid, co.created_height, co.tx_index, co.amount, co.spent_height FROM charm_outputs co JOIN apps a ON a.id = co.app_id',
  )) {
    const s = at(r.app as string, Number(r.created_height), Number(r.tx_index), Buffer.from(r.txid as Uint8Array).toString('hex'));
    s.created++;
    if (r.spent_height === null) s.delta += r.amount === null ? 1n : big(r.amount);
  }
  await tx.run('DELETE FROM assets');
  const byHeight = new Map<number, Map<string, Seen>>();
  for (const [app, { height, s }] of first) {
    let m = byHeight.get(height);
    if (!m) byHeight.set(height, (m = new Map()));
    m.set(app, s);
  }
  for (const [height, seen] of byHeight) await apply(tx, height, seen);
  await tx.run("UPDATE meta SET value = 'filled' WHERE key = 'assets_catalogue'");
}

/**
 * What block `b` changes in the catalogue, after the store wrote its rows in `tx` (its outputs
 * inserted, the outputs it spends marked spent at its height).
 */
export async function catalogueBlock(tx: TxDriver, b: BlockWrite): Promise<void> {
  if (await pending(tx)) return fill(tx); // the fill reads this block's rows too
  const seen = new Map<string, Seen>();
  for (const s of b.spellTxs) for (const app of spellApps(s.spell)) note(seen, app, s.txIndex, s.txid);
  for (const o of b.outputs) {
    const s = note(seen, o.app, o.txIndex, o.txid);
    s.delta += o.amount ?? 1n;
    s.created++;
  }
  // the outputs this block spent (created before it or in it)
  for (const r of await tx.all('SELECT a.app, co.amount FROM charm_outputs co JOIN apps a ON a.id = co.app_id WHERE co.spent_height = ?', [b.height])) {
    const app = r.app as string;
    let s = seen.get(app);
    if (!s) seen.set(app, (s = { txIndex: Number.MAX_SAFE_INTEGER, txid: '', delta: 0n, created: 0 }));
    s.delta -= r.amount === null ? 1n : big(r.amount);
  }
  await apply(tx, b.height, seen);
}

/**
 * What undoing every block above `forkHeight` changes in the catalogue, in the rollback's
 * transaction `tx` before the store deletes and un-spends the rows: outputs created above the fork
 * and unspent leave the supply, those created at or below it and spent above come back, and the
 * apps first seen above the fork leave the catalogue.
 */
export async function catalogueRollback(tx: TxDriver, forkHeight: number): Promise<void> {
  if (await pending(tx)) return; // the first fill reads the state after the rollback
  const delta = new Map<number, { supply: bigint; outputs: number }>();
  const rows = await tx.all(
    // two ranges (co_order, co_spent), not one OR scan
    `SELECT app_id, amount, created_height, spent_height FROM charm_outputs WHERE created_height > ?
     UNION ALL SELECT app_id, amount, created_height, spent_height FROM charm_outputs WHERE spent_height > ? AND created_height <= ?`,
    [forkHeight, forkHeight, forkHeight],
  );
  for (const r of rows) {
    const id = Number(r.app_id);
    let d = delta.get(id);
    if (!d) delta.set(id, (d = { supply: 0n, outputs: 0 }));
    const amount = r.amount === null ? 1n : big(r.amount);
    const created = Number(r.created_height) > forkHeight;
    if (created) {
      d.outputs--;
      if (r.spent_height === null) d.supply -= amount;
    } else d.supply += amount;
  }
  await tx.run('DELETE FROM assets WHERE first_height > ?', [forkHeight]);
  const ids = [...delta.keys()].sort((a, b) => a - b);
  const have = new Map<number, Row>();
  for (const r of await inChunks(ids, (part, marks) => tx.all(`SELECT app_id, supply, outputs FROM assets WHERE app_id IN (${marks})`, part)))
    have.set(Number(r.app_id), r);
  for (const id of ids) {
    const h = have.get(id);
    const d = delta.get(id)!;
    if (h)
      await tx.run('UPDATE assets SET supply = ?, outputs = ? WHERE app_id = ?', [(big(h.supply) + d.supply).toString(), Number(h.outputs) + d.outputs, id]);
  }
}
