/**
 * The generic value tree shared by the CBOR, JSON and YAML codecs (the analogue of ciborium's
 * `Value`, which is what Charms' `Data` wraps).
 *
 * - integers are `bigint` (u64 amounts exceed 2^53), floats are `number`: the two never mix,
 *   so `2` and `2.0` stay distinct as they do in Rust;
 * - maps are `ValueMap`, an ordered list of entries: Charms `Data` keeps source order, and JS
 *   objects would reorder integer-like keys;
 * - `Uint8Array` is a CBOR byte string (never produced from JSON/YAML);
 * - `undefined` is CBOR `undefined` (f7), `null` is CBOR null (f6).
 */
export type Value = bigint | number | string | boolean | null | undefined | Uint8Array | Value[] | ValueMap | Tagged;

export class ValueMap {
  /** Indexes of entries whose key was a chunked (indefinite-length) string in the CBOR input. */
  indefiniteKeys?: Set<number>;
  constructor(public entries: [Value, Value][] = []) {}

  get size(): number {
    return this.entries.length;
  }

  /** First value under a text key (struct field lookup). */
  get(key: string): Value | undefined {
    for (const [k, v] of this.entries) if (k === key) return v;
    return undefined;
  }

  has(key: string): boolean {
    return this.entries.some(([k]) => k === key);
  }

  set(key: Value, value: Value): this {
    this.entries.push([key, value]);
    return this;
  }

  static of(obj: Record<string, Value>): ValueMap {
    return new ValueMap(Object.entries(obj));
  }
}

export class Tagged {
  constructor(
    public tag: bigint,
    public value: Value,
  ) {}
}

/** Structural equality of two values (map order matters, as in ciborium's Value). */
export function valueEquals(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b) || a === b;
  if (a instanceof Uint8Array && b instanceof Uint8Array) return a.length === b.length && a.every((x, i) => x === b[i]);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => valueEquals(x, b[i]));
  if (a instanceof ValueMap && b instanceof ValueMap)
    return a.entries.length === b.entries.length && a.entries.every(([k, v], i) => valueEquals(k, b.entries[i]![0]) && valueEquals(v, b.entries[i]![1]));
  if (a instanceof Tagged && b instanceof Tagged) return a.tag === b.tag && valueEquals(a.value, b.value);
  return false;
}
