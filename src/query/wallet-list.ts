/**
 * The charms in a Bitcoin Core wallet (`charms wallet list`): the wallet's UTXOs (`listunspent 0`),
 * the transactions that made them (`getrawtransaction`), their spells verified together (one
 * batched pairing check per verifying key), and per UTXO the charms its output carries.
 *
 * As the reference: transactions are visited in txid order; one that cannot be fetched or carries
 * no valid spell is skipped; unsolvable UTXOs are skipped. One deliberate difference: `sats` is the
 * amount rounded to the satoshi, where the reference truncates the float product (0.29 BTC gave
 * 28999999).
 */
import { CharmsError } from '../errors.js';
import type { Value } from '../codec/value.js';
import { appToString } from '../model/primitives.js';
import { isNoSpell, verifySpells } from '../verify/index.js';
import type { BitcoinNode } from '../sources/bitcoin-node.js';

/** One `listunspent` entry (the fields used). */
interface Unspent {
  txid: string;
  vout: number;
  amount: number;
  confirmations: number;
  solvable?: boolean;
}

export interface WalletCharms {
  /** `<txid>:<vout>` */
  utxoId: string;
  confirmations: number;
  sats: bigint;
  /** App (as text) → its charm data, sorted by app. */
  charms: [string, Value][];
}

export interface WalletListOptions {
  /** Accept mock proofs. */
  mock: boolean;
  /** Called before each transaction is fetched (the reference prints `Looking at tx <txid>...`). */
  onTx?: (txid: string) => void;
  /** Called once the transactions are fetched, before verifying (e.g. to load a faster pairing backend). */
  beforeVerify?: (count: number) => Promise<void>;
}

function parseUnspent(list: unknown): Unspent[] {
  if (!Array.isArray(list)) throw new CharmsError('UPSTREAM_FAILED', 'listunspent did not answer a list');
  return list.map((u: Record<string, unknown> | null, i) => {
    if (typeof u?.txid !== 'string' || !Number.isInteger(u.vout) || typeof u.amount !== 'number')
      throw new CharmsError('UPSTREAM_FAILED', `listunspent entry ${i} lacks txid/vout/amount`);
    return {
      txid: u.txid,
      vout: u.vout as number,
      amount: u.amount,
      confirmations: typeof u.confirmations === 'number' ? u.confirmations : 0,
      ...(typeof u.solvable === 'boolean' ? { solvable: u.solvable } : {}),
    };
  });
}

/** The wallet's UTXOs that carry charms, in txid then listing order. */
export async function listWalletCharms(node: BitcoinNode, o: WalletListOptions): Promise<WalletCharms[]> {
  let listed: unknown;
  try {
    listed = await node.call('listunspent', [0]);
  } catch (e) {
    if (e instanceof CharmsError && e.code === 'UPSTREAM_UNAVAILABLE') throw e;
    const why = e instanceof Error ? e.message : String(e);
    // the node's own errors name it already ("bitcoind http://… asks for RPC credentials …")
    throw new CharmsError('UPSTREAM_UNAVAILABLE', why.includes(node.name) ? `listunspent failed: ${why}` : `${node.name} listunspent failed: ${why}`, {
      cause: e,
    });
  }
  const byTxid = new Map<string, Unspent[]>();
  for (const u of parseUnspent(listed)) byTxid.set(u.txid, [...(byTxid.get(u.txid) ?? []), u]);
  const fetched: { txid: string; hex: string }[] = [];
  for (const txid of [...byTxid.keys()].sort()) {
    o.onTx?.(txid);
    try {
      const hex = await node.call('getrawtransaction', [txid]);
      if (typeof hex === 'string') fetched.push({ txid, hex });
    } catch (e) {
      // a transaction the node cannot give is skipped, as the reference; a node that is gone is not
      if (!(e instanceof CharmsError) || e.code === 'UPSTREAM_UNAVAILABLE') throw e;
    }
  }
  await o.beforeVerify?.(fetched.length);
  const verdicts = verifySpells(
    fetched.map((f) => ({ bitcoin: f.hex })),
    o.mock,
  );
  const out: WalletCharms[] = [];
  for (const [i, { txid }] of fetched.entries()) {
    const verdict = verdicts[i]!;
    if (!verdict.ok) {
      // no valid spell, or the node's answer is no transaction: skipped, as the reference
      if (isNoSpell(verdict.error) || verdict.error.code === 'INVALID_TX') continue;
      throw verdict.error;
    }
    const spell = verdict.spell;
    for (const u of byTxid.get(txid)!) {
      if (u.solvable === false) continue;
      const charms = spell.tx.outs[u.vout];
      if (!charms || charms.size === 0) continue;
      const named = [...charms.entries()]
        .filter(([k]) => k < spell.app_public_inputs.length)
        .map(([k, d]): [string, Value] => [appToString(spell.app_public_inputs[k]![0]), d])
        .sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
      out.push({ utxoId: `${txid}:${u.vout}`, confirmations: u.confirmations, sats: BigInt(Math.round(u.amount * 1e8)), charms: named });
    }
  }
  return out;
}
