/**
 * What a Bitcoin block changes in the index: the spells it carries (verified with the library,
 * batched), the charm outputs they create, and every input of every transaction (a charm output
 * spent by a transaction without a valid spell is burned: still spent).
 *
 * Only transactions that can carry a spell go to the spell parser: both places a spell can sit
 * (protocol ≥ 9: an `OP_RETURN` whose second push is `spell`; older: a Taproot envelope
 * `OP_FALSE OP_IF "spell" …`, see bitcoin/spell-location.ts) put the five bytes `spell` in the
 * transaction, so a byte search is an exact prefilter (one scan of the block). Inputs are read
 * in place by a light reader that skips scripts and witnesses; the store asks for the full form
 * (hex txids) only of those whose outpoint digest matches a charm output.
 */
import { createHash } from 'node:crypto';
import { blockTxid, blockTxRaw, type Block } from '../bitcoin/block.js';
import { parseTx } from '../bitcoin/tx.js';
import { encodeCbor } from '../codec/cbor.js';
import { CharmsError } from '../errors.js';
import { encodeSpellCbor, type NormalizedSpell } from '../model/spell.js';
import { appToString, txidToDisplay } from '../model/primitives.js';
import { verifySpells } from '../verify/index.js';
import { toHex } from '../util/bytes.js';
import { checkedSpellCbor } from '../groth16/spell.js';
import { outpointDigestOf, type BlockInputs, type BlockWrite, type CharmOutputWrite, type InputWrite } from './store.js';

const SPELL = Buffer.from('spell');

const asBuffer = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** True when the transaction's bytes may carry a spell (no false negatives). */
export const maySpell = (raw: Uint8Array): boolean => asBuffer(raw).indexOf(SPELL) >= 0;

/**
 * The block's transactions (not the coinbase) whose bytes contain `spell`, by index: one scan of
 * the whole block, a hit mapped to the transaction holding all five bytes (`maySpell` of each).
 */
export function spellCandidates(block: Block): number[] {
  const buf = asBuffer(block.bytes);
  const { offsets } = block;
  const n = offsets.length - 1;
  const out: number[] = [];
  let i = 1;
  let from = n > 1 ? offsets[1]! : buf.length;
  while (i < n) {
    const hit = buf.indexOf(SPELL, from);
    if (hit < 0) break;
    while (i < n && offsets[i + 1]! <= hit) i++;
    if (i >= n) break;
    if (hit + SPELL.length <= offsets[i + 1]!) {
      out.push(i);
      from = offsets[i + 1]!;
      i++;
    } else from = hit + 1; // the match runs into the next transaction: not this one's
  }
  return out;
}

/** Outpoint positions (of the 36-byte txid ‖ vout) in a byte array, with their transaction and input index. */
class OutpointList {
  length = 0;
  pos: Uint32Array;
  tx: Uint32Array;
  vin: Uint32Array;
  constructor(capacity: number) {
    this.pos = new Uint32Array(Math.max(4, capacity));
    this.tx = new Uint32Array(this.pos.length);
    this.vin = new Uint32Array(this.pos.length);
  }
  push(pos: number, tx: number, vin: number): void {
    if (this.length === this.pos.length) {
      const grow = (a: Uint32Array) => {
        const b = new Uint32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.pos = grow(this.pos);
      this.tx = grow(this.tx);
      this.vin = grow(this.vin);
    }
    this.pos[this.length] = pos;
    this.tx[this.length] = tx;
    this.vin[this.length] = vin;
    this.length++;
  }
}

const truncatedInputs = () => new CharmsError('INVALID_TX', 'invalid Bitcoin transaction: truncated inputs');

/**
 * Appends the outpoints spent by the serialized transaction `b[start, end)` to `out`, without
 * parsing the rest. Bounds-checked: INVALID_TX on bytes that end early (a mempool transaction is
 * hostile input).
 */
function readOutpoints(b: Uint8Array, start: number, end: number, txIndex: number, out: OutpointList): void {
  let p = start + 4;
  const varint = (): number => {
    if (p + 1 > end) throw truncatedInputs();
    const f = b[p]!;
    if (f < 0xfd) return ((p += 1), f);
    if (f === 0xfd) {
      if (p + 3 > end) throw truncatedInputs();
      p += 3;
      return b[p - 2]! | (b[p - 1]! << 8);
    }
    if (f === 0xfe) {
      if (p + 5 > end) throw truncatedInputs();
      p += 5;
      return (b[p - 4]! | (b[p - 3]! << 8) | (b[p - 2]! << 16) | (b[p - 1]! << 24)) >>> 0;
    }
    throw new CharmsError('INVALID_TX', 'invalid Bitcoin transaction: input count or script length too large');
  };
  if (p + 2 > end) throw truncatedInputs();
  if (b[p] === 0 && b[p + 1] === 1) p += 2; // segwit marker and flag
  const n = varint();
  if (n * 41 > end - p) throw truncatedInputs();
  for (let i = 0; i < n; i++) {
    if (p + 36 > end) throw truncatedInputs();
    out.push(p, txIndex, i);
    p += 36;
    const script = varint(); // (read before adding: varint moves p)
    p += script;
    if (p + 4 > end) throw truncatedInputs(); // sequence
    p += 4;
  }
}

/**
 * The outpoints a serialized transaction spends (`txid` display hex), without parsing the rest.
 * Bounds-checked: INVALID_TX on bytes that end early (a mempool transaction is hostile input).
 */
export function spentOutpoints(raw: Uint8Array): { txid: string; vout: number }[] {
  const list = new OutpointList(4);
  readOutpoints(raw, 0, raw.length, 0, list);
  return Array.from({ length: list.length }, (_, i) => ({ txid: outpointTxid(raw, list.pos[i]!), vout: u32At(raw, list.pos[i]! + 32) }));
}

const u32At = (b: Uint8Array, p: number): number => (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
const outpointTxid = (b: Uint8Array, p: number): string => txidToDisplay(b.subarray(p, p + 32));

/**
 * Every input of a block's transactions (not the coinbase), read in place: the store tests each
 * one's digest against its unspent charm outputs and asks for the few that may match in full.
 */
class BitcoinBlockInputs implements BlockInputs {
  private readonly list: OutpointList;
  constructor(private readonly block: Block) {
    const { bytes, offsets } = block;
    const n = offsets.length - 1;
    this.list = new OutpointList(2 * n);
    for (let t = 1; t < n; t++) readOutpoints(bytes, offsets[t]!, offsets[t + 1]!, t, this.list);
  }
  get length(): number {
    return this.list.length;
  }
  digest(i: number): number {
    const b = this.block.bytes;
    const p = this.list.pos[i]!;
    // the display-order txid's first 8 hex digits are the last four bytes, reversed (outpointDigest)
    return outpointDigestOf((b[p + 31]! << 24) | (b[p + 30]! << 16) | (b[p + 29]! << 8) | b[p + 28]!, u32At(b, p + 32));
  }
  at(i: number): InputWrite {
    const b = this.block.bytes;
    const p = this.list.pos[i]!;
    const t = this.list.tx[i]!;
    return { txid: blockTxid(this.block, t), txIndex: t, vin: this.list.vin[i]!, prevTxid: outpointTxid(b, p), prevVout: u32At(b, p + 32) };
  }
}

/**
 * Verifies many transactions' spells: the spell or undefined (no valid spell) per transaction.
 * Asynchronous, so that the verification can run on worker threads (verify-pool.ts).
 */
export type SpellCheck = (raws: Uint8Array[]) => Promise<(NormalizedSpell | undefined)[]>;

/** The library's batch verifier on this thread (real proofs of one key checked together), mock spells when `mock`. */
export const inThreadSpellCheck = (raws: Uint8Array[], mock: boolean): (NormalizedSpell | undefined)[] =>
  verifySpells(
    raws.map((r) => ({ bitcoin: r })),
    mock,
  ).map((v) => (v.ok ? v.spell : undefined));

/** inThreadSpellCheck as a SpellCheck (on the event loop; `SpellVerifyPool` moves it to worker threads). */
export const librarySpellCheck =
  (mock: boolean): SpellCheck =>
  async (raws) =>
    inThreadSpellCheck(raws, mock);

/**
 * A verdict cache in front of a SpellCheck, keyed by the SHA-256 of the whole transaction (a txid
 * does not cover the witness, where old spells live): the mempool's verdicts serve block time.
 */
export class VerdictCache {
  private readonly m = new Map<string, NormalizedSpell | null>();
  constructor(
    private readonly check: SpellCheck,
    private readonly max = 50_000,
  ) {}

  readonly verify: SpellCheck = async (raws) => {
    const keys = raws.map((r) => createHash('sha256').update(r).digest('base64'));
    const todo = keys.map((k, i) => (this.m.has(k) ? -1 : i)).filter((i) => i >= 0);
    const fresh = todo.length ? await this.check(todo.map((i) => raws[i]!)) : [];
    todo.forEach((i, j) => this.remember(keys[i]!, fresh[j] ?? null));
    return keys.map((k) => this.m.get(k) ?? undefined);
  };

  private remember(k: string, v: NormalizedSpell | null): void {
    if (this.m.size >= this.max) this.m.delete(this.m.keys().next().value as string);
    this.m.set(k, v);
  }
}

/**
 * The charms a verified spell puts on the transaction's outputs: one row per (output, app).
 * Outputs listed in `beamed_outs` hold nothing here (their charms were beamed to another chain).
 * A `t/` app's integer value is a fungible amount; any other value is kept as CBOR data.
 */
export function charmOutputs(spell: NormalizedSpell, raw: Uint8Array, txid: string, txIndex: number): CharmOutputWrite[] {
  return spellRows(spell, raw, txid, txIndex).outputs;
}

/**
 * The outputs' rows (held), and those of the outputs in `beamed_outs` with their destination hash
 * (beamed: neither held nor burned, recorded so that a beam's two halves can be matched).
 */
function spellRows(
  spell: NormalizedSpell,
  raw: Uint8Array,
  txid: string,
  txIndex: number,
): { outputs: CharmOutputWrite[]; beamed: NonNullable<BlockWrite['beamed']> } {
  const tx = parseTx(raw);
  const out: CharmOutputWrite[] = [];
  const beamed: NonNullable<BlockWrite['beamed']> = [];
  spell.tx.outs.forEach((charms, vout) => {
    const o = tx.outputs[vout];
    if (!o) return;
    const dest = spell.tx.beamed_outs?.get(vout);
    for (const [k, data] of [...charms.entries()].sort(([a], [b]) => a - b)) {
      const app = spell.app_public_inputs[k]?.[0];
      if (!app) continue;
      const fungible = app.tag === 't' && (typeof data === 'bigint' || (typeof data === 'number' && Number.isSafeInteger(data) && data >= 0));
      const row: CharmOutputWrite = {
        txid,
        txIndex,
        vout,
        app: appToString(app),
        amount: fungible ? BigInt(data as bigint | number) : null,
        data: fungible ? null : encodeCbor(data),
        script: o.script,
        sats: o.value,
      };
      if (dest !== undefined) beamed.push({ ...row, beamedTo: toHex(dest) });
      else out.push(row);
    }
  });
  return { outputs: out, beamed };
}

/**
 * The normalized spell CBOR of spells verified on a thread, which the thread encodes anyway (it
 * hashes it into the public values): the event loop does not encode them again.
 */
const encodedSpells = new WeakMap<NormalizedSpell, Uint8Array>();
/** Records `cbor` as encodeSpellCbor(spell) (verify-pool.ts, for spells from its threads). */
export const rememberSpellCbor = (spell: NormalizedSpell, cbor: Uint8Array): void => void encodedSpells.set(spell, cbor);
const spellCborOf = (spell: NormalizedSpell): Uint8Array => encodedSpells.get(spell) ?? checkedSpellCbor(spell) ?? encodeSpellCbor(spell);

/** The block's txids in display byte order (the order the index stores them in), 32 bytes each. */
export function displayTxids(block: Block): Uint8Array {
  const ids = block.ids;
  const out = new Uint8Array(ids.length);
  for (let p = 0; p < ids.length; p += 32) for (let k = 0; k < 32; k++) out[p + k] = ids[p + 31 - k]!;
  return out;
}

/** The BlockWrite of a checked block at `height`. */
export async function blockWrite(block: Block, height: number, check: SpellCheck): Promise<BlockWrite> {
  const candidates = spellCandidates(block).map((i) => ({ index: i, txid: blockTxid(block, i), raw: blockTxRaw(block, i) }));
  const inputs = new BitcoinBlockInputs(block);
  const spells = candidates.length ? await check(candidates.map((t) => t.raw)) : [];
  const w: BlockWrite = { height, hash: block.header.hash, prevHash: block.header.prevHash, time: block.header.time, spellTxs: [], outputs: [], inputs };
  candidates.forEach((t, i) => {
    const spell = spells[i];
    if (!spell) return;
    w.spellTxs.push({ txid: t.txid, txIndex: t.index, version: spell.version, spell: spellCborOf(spell) });
    const rows = spellRows(spell, t.raw, t.txid, t.index);
    w.outputs.push(...rows.outputs);
    if (rows.beamed.length > 0) (w.beamed ??= []).push(...rows.beamed);
  });
  return w;
}
