/**
 * Decodes function bodies into a flat instruction list (opcode, immediates, byte range) and
 * refuses opcodes outside the feature set the reference runner (wasmi 1.1.0, no SIMD) and
 * Node 20 both support.
 */
import { CharmsError } from '../errors.js';
import { WasmReader } from './wasm-bytes.js';
import { readValType, type ValType } from './wasm-module.js';
import { OP, TYPE } from './opcodes.js';

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
  [OP.try]: 'exception handling (try)',
  [OP.catch]: 'exception handling (catch)',
  [OP.throw]: 'exception handling (throw)',
  [OP.rethrow]: 'exception handling (rethrow)',
  [OP.throwRef]: 'exception handling (throw_ref)',
  [OP.callRef]: 'typed function references (call_ref)',
  [OP.returnCallRef]: 'typed function references (return_call_ref)',
  [OP.delegate]: 'exception handling (delegate)',
  [OP.catchAll]: 'exception handling (catch_all)',
  [OP.tryTable]: 'exception handling (try_table)',
  [OP.gcPrefix]: 'garbage collection (GC) instructions',
  [OP.simdPrefix]: 'SIMD instructions',
  [OP.atomicsPrefix]: 'threads/atomics instructions',
};

function readBlockType(r: WasmReader): BlockType {
  const b = r.bytes[r.pos]!;
  if (b === TYPE.emptyBlock) {
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
    if (locals.length + n > 50000) throw new CharmsError('INVALID_INPUT', 'wasm module: a function declares more than 50000 locals');
    for (let j = 0; j < n; j++) locals.push(t);
  }
  const localsEnd = r.pos;
  const instrs: Instr[] = [];
  while (r.pos < end) {
    const at = r.pos;
    let op = r.u8();
    const ins: Instr = { op, start: at, end: at, a: 0, b: 0 };
    if (op === OP.miscPrefix) {
      op = (OP.miscPrefix << 8) | r.u32();
      ins.op = op;
    }
    decodeImmediates(r, ins);
    ins.end = r.pos;
    instrs.push(ins);
  }
  if (instrs.length === 0 || instrs[instrs.length - 1]!.op !== OP.end)
    throw new CharmsError('INVALID_INPUT', 'wasm module: function body does not end with `end`');
  return { locals, localsStart: start, localsEnd, instrs };
}

function decodeImmediates(r: WasmReader, ins: Instr): void {
  const op = ins.op;
  if (op in REFUSED) unsupported(`${REFUSED[op]} are not allowed in Charms apps (opcode 0x${op.toString(16)})`);
  if (op >= OP.i32Eqz && op <= OP.i64Extend32S) return; // numeric (incl. sign-extension)
  if (op >= OP.i32Load && op <= OP.i64Store32) return readMemarg(r, ins);
  switch (op) {
    case OP.unreachable:
    case OP.nop:
    case OP.else:
    case OP.end:
    case OP.return:
    case OP.drop:
    case OP.select:
    case OP.refIsNull:
      return;
    case OP.block:
    case OP.loop:
    case OP.if:
      ins.bt = readBlockType(r);
      return;
    case OP.br:
    case OP.brIf:
    case OP.call:
    case OP.returnCall:
    case OP.localGet:
    case OP.localSet:
    case OP.localTee:
    case OP.globalGet:
    case OP.globalSet:
    case OP.tableGet:
    case OP.tableSet:
    case OP.refFunc:
      ins.a = r.u32();
      return;
    case OP.brTable: {
      const n = r.u32();
      const targets: number[] = [];
      for (let i = 0; i < n; i++) targets.push(r.u32());
      ins.targets = targets;
      ins.a = r.u32(); // default target
      return;
    }
    case OP.callIndirect:
    case OP.returnCallIndirect:
      ins.a = r.u32();
      ins.b = r.u32();
      return;
    case OP.selectTyped: {
      const n = r.u32();
      if (n !== 1) unsupported('typed select with more than one value type is not supported');
      readValType(r);
      return;
    }
    case OP.memorySize:
    case OP.memoryGrow:
      memIndexZero(r);
      return;
    case OP.i32Const:
      ins.a = r.s32();
      return;
    case OP.i64Const:
      ins.big = r.s64();
      return;
    case OP.f32Const: {
      const b = r.bytesN(4);
      ins.f = new DataView(b.buffer, b.byteOffset, 4).getFloat32(0, true);
      return;
    }
    case OP.f64Const: {
      const b = r.bytesN(8);
      ins.f = new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true);
      return;
    }
    case OP.refNull:
      r.u8();
      return;
  }
  switch (op) {
    case OP.i32TruncSatF32S:
    case OP.i32TruncSatF32U:
    case OP.i32TruncSatF64S:
    case OP.i32TruncSatF64U:
    case OP.i64TruncSatF32S:
    case OP.i64TruncSatF32U:
    case OP.i64TruncSatF64S:
    case OP.i64TruncSatF64U:
      return; // saturating truncation
    case OP.memoryInit:
      ins.a = r.u32();
      memIndexZero(r);
      return;
    case OP.dataDrop:
    case OP.elemDrop:
    case OP.tableGrow:
    case OP.tableSize:
    case OP.tableFill:
      ins.a = r.u32();
      return;
    case OP.memoryCopy:
      memIndexZero(r);
      memIndexZero(r);
      return;
    case OP.memoryFill:
      memIndexZero(r);
      return;
    case OP.tableInit:
    case OP.tableCopy:
      ins.a = r.u32();
      ins.b = r.u32();
      return;
  }
  unsupported(op > 0xff ? `instruction 0xfc ${op & 0xff} is not supported` : `opcode 0x${op.toString(16)} is not supported`);
}
