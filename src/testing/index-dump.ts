/**
 * Test-only reads of the index (no production code asks them): a canonical text of the whole
 * confirmed state (incremental == replay, crash == uninterrupted run) and an app's unspent rows,
 * each read on one snapshot through the store's `read`.
 */
import type { ReadTx } from '../indexer/driver.js';
import type { IndexReader } from '../indexer/store.js';

const hexOf = (b: unknown): string => Buffer.from(b as Uint8Array).toString('hex');
const big = (v: unknown): bigint => BigInt(v as string | number | bigint);
const num = (v: unknown): number => Number(v);
/** Apps by their UTF-8 bytes on both engines (store.ts's order). */
const appOrder = (tx: ReadTx): string => (tx.engine === 'postgres' ? 'a.app COLLATE "C"' : 'a.app');

/** A canonical text of the whole confirmed state: blocks, spells, charm outputs, history, slots, beamed outputs, learned tokens, recent txids. */
export function dumpIndex(store: IndexReader): Promise<string> {
  return store.read(async (tx) => {
    const lines: string[] = [];
    for (const b of await tx.all('SELECT height, hash, prev_hash, time, spell_txs FROM blocks ORDER BY height'))
      lines.push(`block ${num(b.height)} ${hexOf(b.hash)} ${hexOf(b.prev_hash)} ${num(b.time)} ${num(b.spell_txs)}`);
    for (const s of await tx.all('SELECT txid, height, tx_index, version, spell FROM spell_txs ORDER BY txid'))
      lines.push(`spell ${hexOf(s.txid)} ${num(s.height)} ${num(s.tx_index)} ${num(s.version)} ${hexOf(s.spell)}`);
    for (const o of await tx.all(
      `SELECT co.txid, co.vout, a.app, co.amount, co.data, s.script, co.btc_value, co.created_height, co.tx_index, co.spent_height, co.spent_txid, co.spent_vin
       FROM charm_outputs co JOIN apps a ON a.id = co.app_id JOIN scripts s ON s.id = co.script_id ORDER BY co.txid, co.vout, ${appOrder(tx)}`,
    )) {
      const spent = o.spent_height === null ? 'unspent' : `${hexOf(o.spent_txid)}:${num(o.spent_vin)}@${num(o.spent_height)}`;
      lines.push(
        `out ${hexOf(o.txid)}:${num(o.vout)} ${o.app as string} ${o.amount === null ? '-' : big(o.amount)} ${o.data === null ? '-' : hexOf(o.data)} ${hexOf(o.script)} ${big(o.btc_value)} ${num(o.created_height)} ${num(o.tx_index)} ${spent}`,
      );
    }
    for (const h of await tx.all(
      `SELECT s.script, h.height, h.tx_index, h.txid, a.app, h.received, h.sent FROM script_history h JOIN scripts s ON s.id = h.script_id JOIN apps a ON a.id = h.app_id ORDER BY s.script, h.height, h.tx_index, ${appOrder(tx)}`,
    ))
      lines.push(`hist ${hexOf(h.script)} ${num(h.height)} ${num(h.tx_index)} ${hexOf(h.txid)} ${h.app as string} +${big(h.received)} -${big(h.sent)}`);
    for (const c of await tx.all(
      `SELECT a.app, c.asset_type, c.first_height, c.first_tx_index, c.first_txid, c.supply, c.outputs FROM assets c JOIN apps a ON a.id = c.app_id ORDER BY ${appOrder(tx)}`,
    ))
      lines.push(
        `asset ${c.app as string} ${c.asset_type as string} ${num(c.first_height)} ${num(c.first_tx_index)} ${hexOf(c.first_txid)} ${big(c.supply)} ${num(c.outputs)}`,
      );
    for (const o of await tx.all(
      `SELECT order_id, height, tx_index, maker, side, exec_type, price_num, price_den, amount, quantity, asset_app_id, parent_order_id, status, closed_height, closed_status
       FROM dex_orders ORDER BY txid, vout`,
    ))
      lines.push(`dex ${Object.values(o).map(String).join(' ')}`);
    for (const m of await tx.all(
      "SELECT key, value FROM meta WHERE key IN ('dex_tag_charms_cast', 'dex_tag_bro', 'dex_orders_count') AND value <> '0' ORDER BY key",
    ))
      lines.push(`meta ${m.key as string} ${m.value as string}`);
    for (const b of await tx.all('SELECT height, slot FROM block_slots ORDER BY height')) lines.push(`slot ${num(b.height)} ${num(b.slot)}`);
    for (const o of await tx.all(
      `SELECT txid, vout, app, amount, data, script, value, dest, created_height, tx_index FROM beamed_outputs ORDER BY txid, vout, ${tx.engine === 'postgres' ? 'app COLLATE "C"' : 'app'}`,
    ))
      lines.push(
        `beamed ${hexOf(o.txid)}:${num(o.vout)} ${o.app as string} ${o.amount === null ? '-' : big(o.amount)} ${o.data === null ? '-' : hexOf(o.data)} ${hexOf(o.script)} ${big(o.value)} ${hexOf(o.dest)} ${num(o.created_height)} ${num(o.tx_index)}`,
      );
    for (const l of await tx.all(`SELECT app, height FROM learned_tokens ORDER BY ${tx.engine === 'postgres' ? 'app COLLATE "C"' : 'app'}`))
      lines.push(`learned ${l.app as string} ${num(l.height)}`);
    for (const t of await tx.all('SELECT height, txids FROM recent_txs ORDER BY height')) {
      const ids = Buffer.from(t.txids as Uint8Array);
      for (let i = 0; i < ids.length; i += 32) lines.push(`recent ${ids.subarray(i, i + 32).toString('hex')} ${num(t.height)}`);
    }
    return lines.join('\n');
  });
}

/** The unspent rows of an app (script and amount, null: not fungible), by script, txid, vout. */
export function unspentOfApp(store: IndexReader, app: string): Promise<{ script: Uint8Array; amount: bigint | null }[]> {
  return store.read(async (tx) =>
    (
      await tx.all(
        'SELECT s.script, co.amount FROM charm_outputs co JOIN scripts s ON s.id = co.script_id WHERE co.app_id = (SELECT id FROM apps WHERE app = ?) AND co.spent_height IS NULL ORDER BY s.script, co.txid, co.vout',
        [app],
      )
    ).map((x) => ({ script: new Uint8Array(x.script as Uint8Array), amount: x.amount === null ? null : big(x.amount) })),
  );
}
