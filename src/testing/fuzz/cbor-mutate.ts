/**
 * Structure-aware CBOR mutations: the encodings ciborium treats differently from a generic
 * decoder (model/ciborium.ts). An array or map header's declared count changed (tuples never check
 * it) or made indefinite with or without its break, a string split into (possibly nested) chunks
 * at any byte (also inside a character), a tag put in front of an item, a simple value in its
 * two-byte form, an integer as a bignum. Falls back to byte mutations where the input does not
 * walk as CBOR.
 */
import { CborReader, CborWriter } from '../../codec/cbor.js';
import { concatBytes } from '../../util/bytes.js';
import { mutateBytes, type Rng } from './harness.js';

interface Item {
  start: number;
  headEnd: number;
  end: number;
  major: number;
  /** Null for an indefinite length. */
  arg: bigint | null;
  info: number;
}

/** The items of the first CBOR item of `bytes`, in order of their end. Throws on malformed input. */
function walk(bytes: Uint8Array): Item[] {
  const r = new CborReader(bytes);
  const out: Item[] = [];
  const item = (depth: number): void => {
    if (depth > 300) throw new Error('too deep');
    const start = r.pos;
    const h = r.head();
    const headEnd = r.pos;
    const n = h.arg === null ? -1 : Number(h.arg);
    const untilBreak = (each: () => void) => {
      while (r.peekByte() !== 0xff) each();
      r.pos++;
    };
    switch (h.major) {
      case 2:
      case 3:
        if (n < 0) untilBreak(() => item(depth + 1));
        else {
          if (n > bytes.length - r.pos) throw new Error('short');
          r.pos += n;
        }
        break;
      case 4:
        if (n < 0) untilBreak(() => item(depth + 1));
        else for (let i = 0; i < n; i++) item(depth + 1);
        break;
      case 5:
        if (n < 0) untilBreak(() => (item(depth + 1), item(depth + 1)));
        else for (let i = 0; i < n; i++) item(depth + 1), item(depth + 1);
        break;
      case 6:
        item(depth + 1);
        break;
      default:
        if (h.major === 7 && h.arg === null) throw new Error('break');
    }
    out.push({ start, headEnd, end: r.pos, major: h.major, arg: h.arg, info: h.info });
  };
  item(0);
  return out;
}

const head = (major: number, n: bigint): Uint8Array => {
  const w = new CborWriter();
  w.head(major, n);
  return w.finish();
};

const TAGS = [Uint8Array.of(0xc2), Uint8Array.of(0xc3), Uint8Array.of(0xd8, 0x20), Uint8Array.of(0xd9, 0xd9, 0xf7), Uint8Array.of(0xc6)];

/** One structural mutation of `input`, or a byte mutation when none applies. */
export function mutateCborStructure(rng: Rng, input: Uint8Array, pool: readonly Uint8Array[]): Uint8Array {
  if (rng.int(5) === 0) return mutateBytes(rng, input, pool);
  let items: Item[];
  try {
    items = walk(input);
  } catch {
    return mutateBytes(rng, input, pool);
  }
  const replace = (it: Item, ...mid: Uint8Array[]) => concatBytes(input.subarray(0, it.start), ...mid, input.subarray(it.end));
  const pick = (ok: (it: Item) => boolean) => {
    const xs = items.filter(ok);
    return xs.length === 0 ? undefined : rng.pick(xs);
  };
  const it0 = items[0]!;
  switch (rng.int(6)) {
    case 0: {
      // an array or map header's declared count changed, or made indefinite (with or without its break)
      const it = pick((x) => (x.major === 4 || x.major === 5) && x.arg !== null);
      if (!it) break;
      const body = input.subarray(it.headEnd, it.end);
      switch (rng.int(4)) {
        case 0:
          return replace(it, head(it.major, it.arg! + 1n + BigInt(rng.int(3))), body);
        case 1:
          return replace(it, head(it.major, it.arg! > 0n ? it.arg! - 1n : 0n), body);
        case 2:
          return replace(it, Uint8Array.of((it.major << 5) | 31), body, Uint8Array.of(0xff));
        default:
          return replace(it, Uint8Array.of((it.major << 5) | 31), body);
      }
    }
    case 1: {
      // a definite string split into chunks at any byte, maybe nested
      const it = pick((x) => (x.major === 2 || x.major === 3) && x.arg !== null);
      if (!it) break;
      const body = input.subarray(it.headEnd, it.end);
      const cut = rng.int(body.length + 1);
      const a = concatBytes(head(it.major, BigInt(cut)), body.subarray(0, cut));
      const b = concatBytes(head(it.major, BigInt(body.length - cut)), body.subarray(cut));
      const indef = Uint8Array.of((it.major << 5) | 31);
      const brk = Uint8Array.of(0xff);
      return rng.int(3) === 0 ? replace(it, indef, a, indef, b, brk, brk) : replace(it, indef, a, b, brk);
    }
    case 2: {
      // a tag in front of an item
      const it = rng.pick(items);
      return replace(it, rng.pick(TAGS), input.subarray(it.start, it.end));
    }
    case 3: {
      // a simple value in its two-byte form, or another simple value
      const it = pick((x) => x.major === 7 && x.info < 24);
      if (!it) break;
      return replace(it, Uint8Array.of(0xf8, rng.int(3) === 0 ? rng.int(256) : it.info));
    }
    case 4: {
      // an integer as a bignum (tag 2/3 on its big-endian bytes, maybe chunked)
      const it = pick((x) => (x.major === 0 || x.major === 1) && x.arg !== null);
      if (!it) break;
      let hex = it.arg!.toString(16);
      if (hex.length % 2) hex = '0' + hex;
      const mag = Uint8Array.from(hex.match(/../g)!.map((x) => parseInt(x, 16)));
      const zeros = new Uint8Array(rng.int(3));
      const bytes = concatBytes(zeros, mag);
      const tag = Uint8Array.of(it.major === 0 ? 0xc2 : 0xc3);
      return rng.int(2) === 0
        ? replace(it, tag, head(2, BigInt(bytes.length)), bytes)
        : replace(it, tag, Uint8Array.of(0x5f), head(2, BigInt(bytes.length)), bytes, Uint8Array.of(0xff));
    }
    default: {
      // trailing bytes after the item, or an item repeated in place
      const it = rng.pick(items);
      if (it === it0) return concatBytes(input, Uint8Array.of(rng.int(256)));
      return replace(it, input.subarray(it.start, it.end), input.subarray(it.start, it.end));
    }
  }
  return mutateBytes(rng, input, pool);
}
