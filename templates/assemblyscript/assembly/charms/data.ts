// The Charms data model as apps see it: App, Data, Transaction and the helpers contracts use.

export enum Kind {
  Null,
  Bool,
  Uint,
  NegInt,
  Float,
  Bytes,
  Text,
  Array,
  Map,
  Tag,
}

/** A CBOR value (`charms_data::Data`). Maps keep their order. */
export class Data {
  u: u64 = 0;
  f: f64 = 0;
  b: bool = false;
  s: string = "";
  bytes: Uint8Array = new Uint8Array(0);
  items: Data[] = [];
  keys: Data[] = [];

  constructor(public kind: Kind) {}

  static null(): Data {
    return new Data(Kind.Null);
  }
  static bool(b: bool): Data {
    const d = new Data(Kind.Bool);
    d.b = b;
    return d;
  }
  static uint(u: u64): Data {
    const d = new Data(Kind.Uint);
    d.u = u;
    return d;
  }
  static text(s: string): Data {
    const d = new Data(Kind.Text);
    d.s = s;
    return d;
  }

  isNull(): bool {
    return this.kind == Kind.Null;
  }
  isEmpty(): bool {
    return this.kind == Kind.Null;
  }

  /** The value under a text key of a map, or null. */
  get(key: string): Data | null {
    if (this.kind != Kind.Map) return null;
    for (let i = 0; i < this.keys.length; i++) {
      const k = this.keys[i];
      if (k.kind == Kind.Text && k.s == key) return this.items[i];
    }
    return null;
  }

  /** An unsigned integer, or throws. */
  asU64(): u64 {
    if (this.kind != Kind.Uint) throw new Error("expected an unsigned integer");
    return this.u;
  }

  asString(): string {
    if (this.kind != Kind.Text) throw new Error("expected a string");
    return this.s;
  }

  equals(o: Data): bool {
    if (this.kind != o.kind) return false;
    switch (this.kind) {
      case Kind.Null:
        return true;
      case Kind.Bool:
        return this.b == o.b;
      case Kind.Uint:
      case Kind.NegInt:
        return this.u == o.u;
      case Kind.Float:
        return this.f == o.f;
      case Kind.Text:
        return this.s == o.s;
      case Kind.Bytes:
        return bytesEqual(this.bytes, o.bytes);
      case Kind.Tag:
        return this.u == o.u && this.items[0].equals(o.items[0]);
      default: {
        if (this.items.length != o.items.length || this.keys.length != o.keys.length) return false;
        for (let i = 0; i < this.items.length; i++) if (!this.items[i].equals(o.items[i])) return false;
        for (let i = 0; i < this.keys.length; i++) if (!this.keys[i].equals(o.keys[i])) return false;
        return true;
      }
    }
  }
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): bool {
  if (a.length != b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] != b[i]) return false;
  return true;
}

/** Bytes from a CBOR byte string or an array of small uints (how Rust's serde writes [u8; N]). */
export function dataBytes(d: Data): Uint8Array {
  if (d.kind == Kind.Bytes) return d.bytes;
  if (d.kind != Kind.Array) throw new Error("expected bytes");
  const out = new Uint8Array(d.items.length);
  for (let i = 0; i < d.items.length; i++) out[i] = <u8>d.items[i].asU64();
  return out;
}

export const TOKEN = "t";
export const NFT = "n";

export class App {
  constructor(public tag: string, public identity: Uint8Array, public vk: Uint8Array) {}

  static fromData(d: Data): App {
    if (d.kind != Kind.Array || d.items.length != 3) throw new Error("expected an app [tag, identity, vk]");
    return new App(d.items[0].asString(), dataBytes(d.items[1]), dataBytes(d.items[2]));
  }

  equals(o: App): bool {
    return this.tag == o.tag && bytesEqual(this.identity, o.identity) && bytesEqual(this.vk, o.vk);
  }

  toString(): string {
    return this.tag + "/" + toHex(this.identity) + "/" + toHex(this.vk);
  }
}

/** The charms of one output: app → data. */
export class Charms {
  apps: App[] = [];
  values: Data[] = [];

  static fromData(d: Data): Charms {
    const c = new Charms();
    if (d.kind != Kind.Map) throw new Error("expected charms map");
    for (let i = 0; i < d.keys.length; i++) {
      c.apps.push(App.fromData(d.keys[i]));
      c.values.push(d.items[i]);
    }
    return c;
  }

  get(app: App): Data | null {
    for (let i = 0; i < this.apps.length; i++) if (this.apps[i].equals(app)) return this.values[i];
    return null;
  }
}

export class UtxoId {
  constructor(public txid: Uint8Array, public vout: u32) {}

  static fromData(d: Data): UtxoId {
    const b = dataBytes(d);
    if (b.length != 36) throw new Error("expected a 36-byte UTXO id");
    const vout = <u32>b[32] | (<u32>b[33] << 8) | (<u32>b[34] << 16) | (<u32>b[35] << 24);
    return new UtxoId(b.slice(0, 32), vout);
  }

  /** `txid:vout` with the txid in display (reversed) order. */
  toString(): string {
    const rev = new Uint8Array(32);
    for (let i = 0; i < 32; i++) rev[i] = this.txid[31 - i];
    return toHex(rev) + ":" + this.vout.toString();
  }
}

export class NativeOutput {
  constructor(public amount: u64, public dest: Uint8Array) {}
}

export class Transaction {
  insUtxos: UtxoId[] = [];
  ins: Charms[] = [];
  refsUtxos: UtxoId[] = [];
  refs: Charms[] = [];
  outs: Charms[] = [];
  coinIns: NativeOutput[] = [];
  coinOuts: NativeOutput[] = [];

  static fromData(d: Data): Transaction {
    const tx = new Transaction();
    const ins = d.get("ins");
    if (ins) {
      for (let i = 0; i < ins.items.length; i++) {
        tx.insUtxos.push(UtxoId.fromData(ins.items[i].items[0]));
        tx.ins.push(Charms.fromData(ins.items[i].items[1]));
      }
    }
    const refs = d.get("refs");
    if (refs) {
      for (let i = 0; i < refs.items.length; i++) {
        tx.refsUtxos.push(UtxoId.fromData(refs.items[i].items[0]));
        tx.refs.push(Charms.fromData(refs.items[i].items[1]));
      }
    }
    const outs = d.get("outs");
    if (outs) for (let i = 0; i < outs.items.length; i++) tx.outs.push(Charms.fromData(outs.items[i]));
    const ci = d.get("coin_ins");
    if (ci && ci.kind == Kind.Array)
      for (let i = 0; i < ci.items.length; i++) tx.coinIns.push(nativeOutput(ci.items[i]));
    const co = d.get("coin_outs");
    if (co && co.kind == Kind.Array)
      for (let i = 0; i < co.items.length; i++) tx.coinOuts.push(nativeOutput(co.items[i]));
    return tx;
  }
}

function nativeOutput(d: Data): NativeOutput {
  const amount = d.get("amount");
  const dest = d.get("dest");
  return new NativeOutput(amount ? amount.asU64() : 0, dest ? dataBytes(dest) : new Uint8Array(0));
}

/** Values of `app` in the given outputs, in order. */
export function charmValues(app: App, charms: Charms[]): Data[] {
  const out: Data[] = [];
  for (let i = 0; i < charms.length; i++) {
    const v = charms[i].get(app);
    if (v) out.push(v);
  }
  return out;
}

/** Total amount of a fungible token; throws on a non-integer amount or overflow. */
export function sumTokenAmount(app: App, charms: Charms[]): u64 {
  const values = charmValues(app, charms);
  let total: u64 = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i].asU64();
    if (total + v < total) throw new Error("token amount overflows u64");
    total += v;
  }
  return total;
}

export function tokenAmountsBalanced(app: App, tx: Transaction): bool {
  return sumTokenAmount(app, tx.ins) == sumTokenAmount(app, tx.outs);
}

/** The NFT states in the outputs equal those in the inputs (as multisets). */
export function nftStatePreserved(app: App, tx: Transaction): bool {
  const ins = charmValues(app, tx.ins);
  const outs = charmValues(app, tx.outs);
  if (ins.length != outs.length) return false;
  const used = new Array<bool>(outs.length).fill(false);
  for (let i = 0; i < ins.length; i++) {
    let found = false;
    for (let j = 0; j < outs.length; j++) {
      if (!used[j] && ins[i].equals(outs[j])) {
        used[j] = true;
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

export function isSimpleTransfer(app: App, tx: Transaction): bool {
  if (app.tag == TOKEN) return tokenAmountsBalanced(app, tx);
  if (app.tag == NFT) return nftStatePreserved(app, tx);
  return false;
}

export function toHex(b: Uint8Array): string {
  const digits = "0123456789abcdef";
  let s = "";
  for (let i = 0; i < b.length; i++) s += digits.charAt(b[i] >> 4) + digits.charAt(b[i] & 15);
  return s;
}
