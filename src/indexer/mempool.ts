/**
 * The mempool overlay: pending charm receives (verified spells of unconfirmed transactions) and
 * pending spends (outpoints unconfirmed transactions spend), in memory only — never written into
 * the confirmed tables, so `confirmed` figures never move with the mempool.
 *
 * Each refresh takes the source's mempool as the truth: transactions that left it (mined, replaced
 * by RBF, evicted, conflicted by a block) drop out; a transaction a reorg returned to the node's
 * mempool comes back as pending. Transactions are fetched once and verdicts cached (the same
 * cache serves block time).
 */
import type { BlockSource } from '../sources/block-source.js';
import { charmOutputs, maySpell, spentOutpoints, type SpellCheck } from './block-write.js';
import { outpointDigestOf, type BlockWrite, type CharmOutpoints, type CharmOutputWrite } from './store.js';

export interface PendingTx {
  txid: string;
  /** Charm outputs the transaction creates (empty without a valid spell). */
  outputs: CharmOutputWrite[];
  /** Outpoints (`txid:vout`) it spends. */
  spends: string[];
}

export class MempoolOverlay {
  private txs = new Map<string, PendingTx>();
  private spent = new Map<string, string>(); // outpoint → spending txid
  /** `outpointDigestOf` of every key of `spent`: a block's inputs are matched by digest first. */
  private spentDigests = new Set<number>();
  /** The transactions with charm outputs (a few among the whole mempool's): what receives read. */
  private charmTxs: PendingTx[] = [];
  private gen = 0;

  /** What the answers read after the last refresh: charm transactions and spends of charm outpoints. */
  private seen: { writes: number; charmTxs: string; charmSpends: Map<string, string> } | undefined;
  /** How many unspent confirmed charm outputs the overlay spends, as of the confirmed state `of`. */
  private confirmedSpends: { of: CharmOutpoints; count: number } | undefined;

  constructor(
    private readonly check: SpellCheck,
    /** At most this many transactions are tracked (memory bound); the rest wait for the next refresh. */
    private readonly maxTxs = 200_000,
    /**
     * Whether an outpoint is an unspent charm output of the confirmed index (the store's exact
     * test; undefined when it cannot tell now). With it, a change of the mempool that no answer
     * reads (a transaction without charms spending no charm output: nearly all of a busy mempool)
     * keeps the generation, so kept answers live on; without it, every change moves it.
     */
    private readonly charmOutpoints?: () => Promise<CharmOutpoints | undefined>,
  ) {}

  get size(): number {
    return this.txs.size;
  }

  /** Moves whenever what the overlay answers may have changed (answers cached before are stale). */
  get generation(): number {
    return this.gen;
  }

  get spellTxs(): number {
    return this.charmTxs.length;
  }

  async refresh(source: BlockSource): Promise<void> {
    const ids = await source.mempoolTxids();
    const live = new Set(ids);
    const before = this.txs.size;
    for (const id of [...this.txs.keys()]) if (!live.has(id)) this.txs.delete(id);
    const dropped = this.txs.size !== before;
    const charmBefore = this.charmTxs.length;
    this.charmTxs = this.charmTxs.filter((t) => live.has(t.txid));
    // receives and lookups by txid see a dropped charm transaction at once (spends at the end)
    if (this.charmTxs.length !== charmBefore) this.gen++;
    const fresh: { txid: string; raw: Uint8Array }[] = [];
    for (const id of ids) {
      if (this.txs.has(id) || this.txs.size + fresh.length >= this.maxTxs) continue;
      const raw = await source.rawTx(id);
      if (raw) fresh.push({ txid: id, raw });
    }
    const candidates = fresh.filter((f) => maySpell(f.raw));
    const spells = candidates.length ? await this.check(candidates.map((c) => c.raw)) : [];
    const spellOf = new Map(candidates.map((c, i) => [c.txid, spells[i]]));
    // asked before the maps change below, so that they change and the generation moves in one turn
    const isCharm = await this.charmOutpoints?.().catch(() => undefined);
    for (const f of fresh) {
      let spends: string[];
      try {
        spends = spentOutpoints(f.raw).map((p) => `${p.txid}:${p.vout}`);
      } catch {
        continue; // not a transaction we can read: ignored
      }
      const spell = spellOf.get(f.txid);
      this.txs.set(f.txid, { txid: f.txid, spends, outputs: spell ? charmOutputs(spell, f.raw, f.txid, -1) : [] });
    }
    this.reindex();
    if (dropped || this.txs.size !== before) this.moveIfRead(isCharm);
    else if (isCharm && this.confirmedSpends?.of.writes !== isCharm.writes) this.countConfirmedSpends(isCharm);
    else if (!isCharm) this.confirmedSpends = undefined;
  }

  /** Rebuilds what is derived from `txs`: the spends, their digests, the charm transactions. */
  private reindex(): void {
    this.spent = new Map();
    for (const t of this.txs.values()) for (const s of t.spends) this.spent.set(s, t.txid);
    this.spentDigests = new Set([...this.spent.keys()].map(outpointKeyDigest));
    this.charmTxs = [...this.txs.values()].filter((t) => t.outputs.length > 0);
  }

  /**
   * Called as soon as blocks are committed, not waiting for the next refresh (which comes after
   * the whole sync, and may fail): the pending transactions they confirm leave the overlay, and so
   * do those they conflict with (a block spends an outpoint they spend) with what spends their
   * outputs. Otherwise a mined receive would count as confirmed and as pending at once.
   */
  blocksCommitted(ws: BlockWrite[]): void {
    if (this.spent.size === 0) return;
    const gone = new Set<string>();
    const conflicted: string[] = [];
    for (const w of ws) {
      const ins = w.inputs;
      const n = ins.length;
      for (let i = 0; i < n; i++) {
        if (!Array.isArray(ins) && !this.spentDigests.has(ins.digest(i))) continue;
        const input = Array.isArray(ins) ? ins[i]! : ins.at(i);
        const by = this.spent.get(`${input.prevTxid}:${input.prevVout}`);
        if (by === undefined || gone.has(by)) continue;
        gone.add(by);
        if (by !== input.txid) conflicted.push(by); // a double spend of what the block spends
      }
    }
    if (gone.size === 0) return;
    // what spends a conflicted transaction's outputs can never confirm either
    if (conflicted.length > 0) {
      const children = new Map<string, string[]>(); // txid → the pending transactions spending its outputs
      for (const [op, by] of this.spent) {
        const parent = op.slice(0, op.lastIndexOf(':'));
        const known = children.get(parent);
        if (known) known.push(by);
        else children.set(parent, [by]);
      }
      for (let k = 0; k < conflicted.length; k++)
        for (const c of children.get(conflicted[k]!) ?? [])
          if (!gone.has(c)) {
            gone.add(c);
            conflicted.push(c);
          }
    }
    for (const id of gone) this.txs.delete(id);
    this.reindex();
    this.confirmedSpends = undefined; // counted again by the next refresh
    this.gen++;
  }

  /**
   * Whether a pending transaction may spend an unspent confirmed charm output (then `spender`
   * must be asked per output). False only when the last refresh counted none under the committed
   * state that is still the index's: the balances then read no outpoints (store.unspentAmounts).
   */
  spendsConfirmedCharms(): boolean {
    const c = this.confirmedSpends;
    return !c || c.count > 0 || !c.of.current();
  }

  private countConfirmedSpends(isCharm: CharmOutpoints): Map<string, string> {
    const pending = new Set<string>();
    for (const t of this.charmTxs) for (const o of t.outputs) pending.add(`${o.txid}:${o.vout}`);
    const charmSpends = new Map<string, string>();
    let count = 0;
    for (const [op, by] of this.spent) {
      const colon = op.lastIndexOf(':');
      const confirmed = isCharm.has(op.slice(0, colon), Number(op.slice(colon + 1)));
      if (confirmed) count++;
      if (confirmed || pending.has(op)) charmSpends.set(op, by);
    }
    this.confirmedSpends = { of: isCharm, count };
    return charmSpends;
  }

  /**
   * Moves the generation when what answers read changed since the last refresh: the charm
   * transactions, or the spender of a charm outpoint (an unspent confirmed one, or a pending one),
   * or when that cannot be told (`isCharm` undefined) or the confirmed state moved since.
   */
  private moveIfRead(isCharm: CharmOutpoints | undefined): void {
    const charmTxs = this.charmTxs
      .map((t) => t.txid)
      .sort()
      .join();
    if (!isCharm) this.confirmedSpends = undefined;
    const charmSpends = isCharm ? this.countConfirmedSpends(isCharm) : new Map<string, string>();
    const last = this.seen;
    this.seen = isCharm ? { writes: isCharm.writes, charmTxs, charmSpends } : undefined;
    // compared under the same confirmed state only (a block between refreshes: moved)
    if (!isCharm || !last || last.writes !== isCharm.writes || last.charmTxs !== charmTxs || !sameEntries(last.charmSpends, charmSpends)) this.gen++;
  }

  /** The unconfirmed transaction spending `txid:vout`, if any. */
  spender(txid: string, vout: number): string | undefined {
    return this.spent.get(`${txid}:${vout}`);
  }

  /** Pending charm outputs paying `script` that no other pending transaction spends. */
  receivesOf(script: Uint8Array): CharmOutputWrite[] {
    const key = Buffer.from(script).toString('hex');
    const out: CharmOutputWrite[] = [];
    for (const t of this.charmTxs)
      for (const o of t.outputs) if (Buffer.from(o.script).toString('hex') === key && !this.spent.has(`${o.txid}:${o.vout}`)) out.push(o);
    return out.sort((a, b) => (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : a.vout - b.vout || (a.app < b.app ? -1 : 1)));
  }

  /** The pending transactions with verified charm outputs (any order). */
  pendingCharmTxs(): readonly PendingTx[] {
    return this.charmTxs;
  }

  get(txid: string): PendingTx | undefined {
    return this.txs.get(txid);
  }
}

/** `outpointDigestOf` of a `txid:vout` key (the display txid's first 8 hex digits, as BlockInputs.digest). */
function outpointKeyDigest(key: string): number {
  return outpointDigestOf(Number.parseInt(key.slice(0, 8), 16), Number(key.slice(key.lastIndexOf(':') + 1)));
}

function sameEntries(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (b.get(k) !== v) return false;
  return true;
}
