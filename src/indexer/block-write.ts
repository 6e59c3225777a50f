/**
 * What a Bitcoin block changes in the index: the spells it carries (verified with the library,
 * batched), the charm outputs they create, and every input of every transaction (a charm output
 * spent by a transaction without a valid spell is burned: still spent).
 *
 * Only transactions that can carry a spell go to the spell parser: both places a spell can sit
 * (protocol ≥ 9: an `OP_RETURN` whose second push is `spell`; older: a Taproot envelope
 * `OP_FALSE OP_IF "spell" …`, see bitcoin/spell-location.ts) put the five bytes `spell` in the
 * transaction, so a byte search is an exact prefilter. Inputs of the others are read by a light
 * reader that skips scripts and witnesses.
 */
import { createHash } from 'node:crypto';
import type { Block } from '../bitcoin/block.js';
import { parseTx } from '../bitcoin/tx.js';
import { encodeCbor } from '../codec/cbor.js';
import { CharmsError } from '../errors.js';
import { encodeSpellCbor, type NormalizedSpell } from '../model/spell.js';
import { appToString } from '../model/primitives.js';
import { verifySpells } from '../verify/index.js';
import type { BlockWrite, CharmOutputWrite, InputWrite } from './store.js';

const SPELL = Buffer.from('spell');

/** True when the transaction's bytes may carry a spell (no false negatives). */
export const maySpell = (raw: Uint8Array): boolean => Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).indexOf(SPELL) >= 0;

/**
 * The outpoints a serialized transaction spends (`txid` display hex), without parsing the rest.
 * Bounds-checked: INVALID_TX on bytes that end early (a mempool transaction is hostile input).
 */
export function spentOutpoints(raw: Uint8Array): { txid: string; vout: number }[] {
  const b = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const truncated = () => new CharmsError('INVALID_TX', 'invalid Bitcoin transaction: truncated inputs');
  let p = 4;
  const need = (n: number) => {
    if (p + n > b.length) throw truncated();
  };
  const varint = (): number => {
    need(1);
    const f = b[p]!;
    if (f < 0xfd) return ((p += 1), f);
    if (f === 0xfd) return (need(3), (p += 3), b.readUInt16LE(p - 2));
    if (f === 0xfe) return (need(5), (p += 5), b.readUInt32LE(p - 4));
    throw new CharmsError('INVALID_TX', 'invalid Bitcoin transaction: input count or script length too large');
  };
  need(2);
  if (b[4] === 0 && b[5] === 1) p += 2; // segwit marker and flag
  const n = varint();
  if (n * 41 > b.length - p) throw truncated();
  const out: { txid: string; vout: number }[] = [];
  for (let i = 0; i < n; i++) {
    need(36);
    const txid = Buffer.from(b.subarray(p, p + 32))
      .reverse()
      .toString('hex');
    const vout = b.readUInt32LE(p + 32);
    p += 36;
    p += varint(); // scriptSig
    need(4); // sequence
    p += 4;
    out.push({ txid, vout });
  }
  return out;
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
  const tx = parseTx(raw);
  const out: CharmOutputWrite[] = [];
  spell.tx.outs.forEach((charms, vout) => {
    if (spell.tx.beamed_outs?.has(vout)) return;
    const o = tx.outputs[vout];
    if (!o) return;
    for (const [k, data] of [...charms.entries()].sort(([a], [b]) => a - b)) {
      const app = spell.app_public_inputs[k]?.[0];
      if (!app) continue;
      const fungible = app.tag === 't' && (typeof data === 'bigint' || (typeof data === 'number' && Number.isSafeInteger(data) && data >= 0));
      out.push({
        txid,
        txIndex,
        vout,
        app: appToString(app),
        amount: fungible ? BigInt(data as bigint | number) : null,
        data: fungible ? null : encodeCbor(data),
        script: o.script,
        sats: o.value,
      });
    }
  });
  return out;
}

/**
 * The normalized spell CBOR of spells verified on a thread, which the thread encodes anyway (it
 * hashes it into the public values): the event loop does not encode them again.
 */
const encodedSpells = new WeakMap<NormalizedSpell, Uint8Array>();
/** Records `cbor` as encodeSpellCbor(spell) (verify-pool.ts, for spells from its threads). */
export const rememberSpellCbor = (spell: NormalizedSpell, cbor: Uint8Array): void => void encodedSpells.set(spell, cbor);
const spellCborOf = (spell: NormalizedSpell): Uint8Array => encodedSpells.get(spell) ?? encodeSpellCbor(spell);

/** The BlockWrite of a checked block at `height`. */
export async function blockWrite(block: Block, height: number, check: SpellCheck): Promise<BlockWrite> {
  const inputs: InputWrite[] = [];
  const candidates = block.txs.filter((t) => t.index > 0 && maySpell(t.raw));
  for (const t of block.txs) {
    if (t.index === 0) continue; // the coinbase spends nothing
    spentOutpoints(t.raw).forEach((p, vin) => inputs.push({ txid: t.txid, txIndex: t.index, vin, prevTxid: p.txid, prevVout: p.vout }));
  }
  const spells = candidates.length ? await check(candidates.map((t) => t.raw)) : [];
  const w: BlockWrite = { height, hash: block.header.hash, prevHash: block.header.prevHash, time: block.header.time, spellTxs: [], outputs: [], inputs };
  candidates.forEach((t, i) => {
    const spell = spells[i];
    if (!spell) return;
    w.spellTxs.push({ txid: t.txid, txIndex: t.index, version: spell.version, spell: spellCborOf(spell) });
    w.outputs.push(...charmOutputs(spell, t.raw, t.txid, t.index));
  });
  return w;
}
