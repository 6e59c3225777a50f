/**
 * Decodes function bodies into a flat instruction list (opcode, immediates, byte range) and
 * refuses opcodes outside the feature set the reference runner (wasmi 1.1.0, no SIMD) and
 * Node 20 both support.
 */
import { CharmsError } from '../errors.js';
import { WasmReader } from './wasm-bytes.js';
import { readValType, type ValType } from './wasm-module.js';

/** Block type: an empty/single-value shorthand or a type index. */
export type BlockType = { kind: 'empty' } | { kind: 'value'; type: ValType } | { kind: 'index'; index: number };

export interface Instr {
  /** Opcode; 0xFC-prefixed ops are 0xFC00 | sub-opcode. */
  op: number;
  start: number;
  end: number;
  /** First integer immediate (index, depth, i32 constant, memarg offset…). */
  a: number;
  /** Second integer immediate (call_indirect table, memory.copy source…). */
  b: number;
  /** i64.const value, or f32/f64 constant as a number (in `f`). */
  big?: bigint;
  f?: number;
  bt?: BlockType;
  targets?: number[];
}

export interface DecodedBody {
  /** Declared locals (excluding parameters), in order. */
  locals: ValType[];
  /** Byte range of the locals declaration. */
  localsStart: number;
  localsEnd: number;
  instrs: Instr[];
}

const unsupported = (msg: string): never => {
  throw new CharmsError('UNSUPPORTED', `wasm module: ${msg}`);
};

const REFUSED: Record<number, string> = {
  0x06: 'exception handling (try)',
  0x07: 'exception handling (catch)',
  0x08: 'exception handling (throw)',
  0x09: 'exception handling (rethrow)',
  0x0a: 'exception handling (throw_ref)',
  0x14: 'typed function references (call_ref)',
  0x15: 'typed function references (return_call_ref)',
  0x18: 'exception handling (delegate)',
  0x19: 'exception handling (catch_all)',
  0x1f: 'exception handling (try_table)',
  0xfb: 'garbage collection (GC) instructions',
  0xfd: 'SIMD instructions',
  0xfe: 'threads/atomics instructions',
};

function readBlockType(r: WasmReader): BlockType {
  const b = r.bytes[r.pos]!;
  if (b === 0x40) {
    r.pos++;
    return { kind: 'empty' };
  }
  if ((b & 0xc0) === 0x40) return { kind: 'value', type: readValType(r) };
  const index = r.s33();
  if (index < 0) unsupported(`block type ${index} is not supported`);
  return { kind: 'index', index };
}

function readMemarg(r: WasmReader, ins: Instr): void {
  const align = r.u32();
  if (align & 0x40) unsupported('multiple memories (memarg memory index) are not supported by the Node runner');
  ins.b = align;
  ins.a = r.u32();
}

function memIndexZero(r: WasmReader): void {
  const idx = r.u32();
  if (idx !== 0) unsupported('multiple memories (memory index ≠ 0) are not supported by the Node runner');
}

export function decodeBody(bytes: Uint8Array, start: number, end: number): DecodedBody {
  const r = new WasmReader(bytes, start, end);
  const locals: ValType[] = [];
  const groups = r.u32();
  for (let i = 0; i < groups; i++) {
    const n = r.u32();
    const t = readValType(r);
    if (locals.length + n > 50000)
      throw new CharmsError('INVALID_INPUT', 'wasm module: a function declares more than 50000 locals');
    for (let j = 0; j < n; j++) locals.push(t);
  }
  const localsEnd = r.pos;
  const instrs: Instr[] = [];
  while (r.pos < end) {
    const at = r.pos;
    let op = r.u8();
    const ins: Instr = { op, start: at, end: at, a: 0, b: 0 };
    if (op === 0xfc) {
      op = 0xfc00 | r.u32();
      ins.op = op;
    }
    decodeImmediates(r, ins);
    ins.end = r.pos;
    instrs.push(ins);
  }
  if (instrs.length === 0 || instrs[instrs.length - 1]!.op !== 0x0b)
    throw new CharmsError('INVALID_INPUT', 'wasm module: function body does not end with `end`');
  return { locals, localsStart: start, localsEnd, instrs };
}

function decodeImmediates(r: WasmReader, ins: Instr): void {
  const op = ins.op;
  if (op in REFUSED) unsupported(`${REFUSED[op]} are not allowed in Charms apps (opcode 0x${op.toString(16)})`);
  if (op >= 0x45 && op <= 0xc4) return; // numeric (incl. sign-extension)
  if (op >= 0x28 && op <= 0x3e) return readMemarg(r, ins);
  switch (op) {
    case 0x00: case 0x01: case 0x05: case 0x0b: case 0x0f: case 0x1a: case 0x1b: case 0xd1:
      return;
    case 0x02: case 0x03: case 0x04:
      ins.bt = readBlockType(r);
      return;
    case 0x0c: case 0x0d: case 0x10: case 0x12: case 0x20: case 0x21: case 0x22: case 0x23:
    case 0x24: case 0x25: case 0x26: case 0xd2:
      ins.a = r.u32();
      return;
    case 0x0e: {
      const n = r.u32();
      const targets: number[] = [];
      for (let i = 0; i < n; i++) targets.push(r.u32());
      ins.targets = targets;
      ins.a = r.u32(); // default target
      return;
    }
    case 0x11: case 0x13:
      ins.a = r.u32();
      ins.b = r.u32();
      return;
    case 0x1c: {
      const n = r.u32();
      if (n !== 1) unsupported('typed select with more than one value type is not supported');
      readValType(r);
      return;
    }
    case 0x3f: case 0x40:
      memIndexZero(r);
      return;
    case 0x41:
      ins.a = r.s32();
      return;
    case 0x42:
      ins.big = r.s64();
      return;
    case 0x43: {
      const b = r.bytesN(4);
      ins.f = new DataView(b.buffer, b.byteOffset, 4).getFloat32(0, true);
      return;
    }
    case 0x44: {
      const b = r.bytesN(8);
      ins.f = new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true);
      return;
    }
    case 0xd0:
      r.u8();
      return;
  }
  switch (op) {
    case 0xfc00: case 0xfc01: case 0xfc02: case 0xfc03:
    case 0xfc04: case 0xfc05: case 0xfc06: case 0xfc07:
      return; // saturating truncation
    case 0xfc08: // memory.init
      ins.a = r.u32();
      memIndexZero(r);
      return;
    case 0xfc09: // data.drop
    case 0xfc0d: // elem.drop
    case 0xfc0f: // table.grow
    case 0xfc10: // table.size
    case 0xfc11: // table.fill
      ins.a = r.u32();
      return;
    case 0xfc0a: // memory.copy
      memIndexZero(r);
      memIndexZero(r);
      return;
    case 0xfc0b: // memory.fill
      memIndexZero(r);
      return;
    case 0xfc0c: // table.init
    case 0xfc0e: // table.copy
      ins.a = r.u32();
      ins.b = r.u32();
      return;
  }
  unsupported(
    op > 0xff
      ? `instruction 0xfc ${op & 0xff} is not supported`
      : `opcode 0x${op.toString(16)} is not supported`,
  );
}
