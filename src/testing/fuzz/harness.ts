/**
 * A small seeded mutation fuzzer for the decoders. Deterministic: the same seed gives the same
 * inputs, so a failure found in CI or by `npm run fuzz` is reproduced by its seed and index.
 * The property checked is the house rule for hostile input: a decoder either answers or throws a
 * CharmsError — never another exception (TypeError, RangeError, …), and never an INTERNAL one
 * (that code means "a bug of ours", a 500).
 */
import { CharmsError } from '../../errors.js';
import { concatByteList } from '../../util/bytes.js';

/** splitmix32-style PRNG: small, fast, reproducible. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x9e3779b9) >>> 0;
    let z = this.s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return n <= 0 ? 0 : this.next() % n;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

const INTERESTING = [0x00, 0x01, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1f, 0x3f, 0x40, 0x5f, 0x7f, 0x80, 0x9f, 0xbf, 0xc0, 0xd8, 0xf6, 0xfe, 0xff];

/** One random mutation of `input` (bytes); the result is a new array. */
export function mutateBytes(rng: Rng, input: Uint8Array, pool: readonly Uint8Array[] = []): Uint8Array {
  const b = input;
  const at = (n = b.length) => rng.int(Math.max(1, n));
  switch (rng.int(10)) {
    case 0: {
      // flip a bit
      const out = b.slice();
      if (out.length) out[at()]! ^= 1 << rng.int(8);
      return out;
    }
    case 1: {
      // set a byte to an interesting value
      const out = b.slice();
      if (out.length) out[at()] = rng.pick(INTERESTING);
      return out;
    }
    case 2: {
      // random byte
      const out = b.slice();
      if (out.length) out[at()] = rng.int(256);
      return out;
    }
    case 3: {
      // delete a range
      const i = at();
      const n = 1 + rng.int(Math.min(64, Math.max(1, b.length - i)));
      return concatByteList([b.subarray(0, i), b.subarray(i + n)]);
    }
    case 4: {
      // insert random bytes
      const i = at(b.length + 1);
      const ins = new Uint8Array(1 + rng.int(16)).map(() => rng.pick(INTERESTING));
      return concatByteList([b.subarray(0, i), ins, b.subarray(i)]);
    }
    case 5: {
      // duplicate a range somewhere else
      const i = at();
      const n = 1 + rng.int(Math.min(256, Math.max(1, b.length - i)));
      const j = at(b.length + 1);
      return concatByteList([b.subarray(0, j), b.subarray(i, i + n), b.subarray(j)]);
    }
    case 6:
      // truncate
      return b.slice(0, at(b.length + 1));
    case 7: {
      // splice in a piece of another seed
      const other = pool.length ? rng.pick(pool) : b;
      const i = rng.int(Math.max(1, other.length));
      const piece = other.subarray(i, i + 1 + rng.int(128));
      const j = at(b.length + 1);
      return concatByteList([b.subarray(0, j), piece, b.subarray(j + rng.int(8))]);
    }
    case 8: {
      // overwrite a 4-byte window with a large little/big-endian number
      const out = b.slice();
      const i = at();
      for (let k = 0; k < 4 && i + k < out.length; k++) out[i + k] = rng.pick([0x00, 0x7f, 0x80, 0xff]);
      return out;
    }
    default: {
      // several mutations at once
      let out = b;
      for (let k = 0, n = 2 + rng.int(4); k < n; k++) out = mutateBytes(rng, out, pool);
      return out;
    }
  }
}

export interface FuzzTarget {
  name: string;
  /** Valid (or nearly valid) inputs to mutate. */
  seeds: () => Uint8Array[] | Promise<Uint8Array[]>;
  /** Decodes one input; must return or throw a CharmsError. May be async. */
  run: (input: Uint8Array) => unknown;
  /** Optional target-specific mutation (e.g. text-level edits for YAML); falls back to bytes. */
  mutate?: (rng: Rng, input: Uint8Array, pool: readonly Uint8Array[]) => Uint8Array;
}

interface FuzzFailure {
  index: number;
  input: Uint8Array;
  error: unknown;
}

export interface FuzzStats {
  target: string;
  iterations: number;
  /** Inputs the decoder accepted. */
  accepted: number;
  /** Inputs refused with a CharmsError, by code. */
  refused: Record<string, number>;
  failures: FuzzFailure[];
  ms: number;
}

/**
 * Runs `iterations` mutants of the target's seeds (each mutant may itself be mutated further:
 * accepted mutants join the pool, so the fuzzer walks away from the seeds).
 */
export async function fuzz(target: FuzzTarget, opts: { iterations: number; seed: number; maxFailures?: number }): Promise<FuzzStats> {
  const rng = new Rng(opts.seed);
  const seeds = await target.seeds();
  if (seeds.length === 0) throw new CharmsError('INTERNAL', `fuzz target ${target.name} has no seeds`);
  const pool: Uint8Array[] = [...seeds];
  const stats: FuzzStats = { target: target.name, iterations: 0, accepted: 0, refused: {}, failures: [], ms: 0 };
  const t0 = performance.now();
  const mutate = target.mutate ?? mutateBytes;
  for (let i = 0; i < opts.iterations; i++) {
    const base = rng.pick(pool);
    const input = mutate(rng, base, pool);
    stats.iterations++;
    try {
      await target.run(input);
      stats.accepted++;
      if (pool.length < 256 && input.length <= 1 << 20) pool.push(input);
      else if (input.length <= 1 << 20) pool[seeds.length + rng.int(pool.length - seeds.length)] = input;
    } catch (e) {
      if (e instanceof CharmsError && e.code !== 'INTERNAL') stats.refused[e.code] = (stats.refused[e.code] ?? 0) + 1;
      else {
        stats.failures.push({ index: i, input, error: e });
        if (stats.failures.length >= (opts.maxFailures ?? 5)) break;
      }
    }
  }
  stats.ms = performance.now() - t0;
  return stats;
}

/** One line per failure, for assertion messages. */
export function describeFailures(s: FuzzStats): string {
  return s.failures
    .map((f) => {
      const e = f.error as Error;
      const hex = Buffer.from(f.input.subarray(0, 256)).toString('hex');
      return `${s.target} #${f.index}: ${e?.name}: ${e?.message} (input ${f.input.length} bytes: ${hex}${f.input.length > 256 ? '…' : ''})`;
    })
    .join('\n');
}
