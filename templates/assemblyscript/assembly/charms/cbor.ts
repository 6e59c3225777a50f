// A small CBOR decoder producing `Data` values (what Charms apps receive on stdin).

import { Data, Kind } from "./data";

export class CborReader {
  pos: i32 = 0;
  constructor(public bytes: Uint8Array) {}

  private byte(): u8 {
    if (this.pos >= this.bytes.length) throw new Error("CBOR: unexpected end of input");
    return this.bytes[this.pos++];
  }

  private arg(info: u8): u64 {
    if (info < 24) return <u64>info;
    let n: i32 = 0;
    if (info == 24) n = 1;
    else if (info == 25) n = 2;
    else if (info == 26) n = 4;
    else if (info == 27) n = 8;
    else throw new Error("CBOR: unsupported additional info");
    let v: u64 = 0;
    for (let i = 0; i < n; i++) v = (v << 8) | <u64>this.byte();
    return v;
  }

  private take(n: i32): Uint8Array {
    if (this.pos + n > this.bytes.length) throw new Error("CBOR: truncated string");
    const out = this.bytes.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  read(): Data {
    const b = this.byte();
    const major = b >> 5;
    const info = b & 31;
    if (major == 7) {
      if (info == 20) return Data.bool(false);
      if (info == 21) return Data.bool(true);
      if (info == 22 || info == 23) return Data.null();
      if (info == 25 || info == 26 || info == 27) {
        const bits = this.arg(info);
        const d = new Data(Kind.Float);
        if (info == 27) d.f = reinterpret<f64>(bits);
        else if (info == 26) d.f = <f64>reinterpret<f32>(<u32>bits);
        else d.f = halfToF64(<u16>bits);
        return d;
      }
      throw new Error("CBOR: unsupported simple value");
    }
    if (info == 31) throw new Error("CBOR: indefinite lengths are not supported");
    const a = this.arg(info);
    switch (major) {
      case 0:
        return Data.uint(a);
      case 1: {
        const d = new Data(Kind.NegInt);
        d.u = a; // value is -1 - a
        return d;
      }
      case 2: {
        const d = new Data(Kind.Bytes);
        d.bytes = this.take(<i32>a);
        return d;
      }
      case 3:
        return Data.text(String.UTF8.decode(this.take(<i32>a).buffer));
      case 4: {
        const d = new Data(Kind.Array);
        for (let i: u64 = 0; i < a; i++) d.items.push(this.read());
        return d;
      }
      case 5: {
        const d = new Data(Kind.Map);
        for (let i: u64 = 0; i < a; i++) {
          d.keys.push(this.read());
          d.items.push(this.read());
        }
        return d;
      }
      default: {
        // tag: keep the tagged value
        const d = new Data(Kind.Tag);
        d.u = a;
        d.items.push(this.read());
        return d;
      }
    }
  }
}

function halfToF64(h: u16): f64 {
  const sign: f64 = h & 0x8000 ? -1.0 : 1.0;
  const exp = (h >> 10) & 0x1f;
  const mant = <f64>(h & 0x3ff);
  if (exp == 0) return sign * mant * Math.pow(2, -24);
  if (exp == 31) return mant != 0 ? NaN : sign * Infinity;
  return sign * (1.0 + mant / 1024.0) * Math.pow(2, <f64>exp - 15);
}
