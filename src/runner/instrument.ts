/**
 * Rewrites an app module so that it meters itself the way wasmi charges fuel, and limits its
 * call depth like wasmi does. Added state lives in new exported globals (appended after the
 * module's own globals, so no existing index changes):
 *
 * - `fuel` (i64): remaining fuel, initialised to the budget inside the module so that a start
 *   function is metered too;
 * - `trap` (i32): why the module trapped on purpose (1 = out of fuel, 2 = call depth);
 * - `depth` (i32): current call depth;
 * - one "compiled" flag (i32) per defined function, for wasmi's lazy-compilation fuel.
 *
 * Charges are placed at function entry and after each `loop`/`if`/`else` opcode (where wasmi
 * puts its `ConsumeFuel`), plus dynamic charges for `memory.fill/copy/init` (len / 64) and a
 * successful `memory.grow` (1024 per page).
 */
import { CharmsError } from '../errors.js';
import { WasmReader, WasmWriter } from './wasm-bytes.js';
import { decodeBody } from './wasm-code.js';
import { functionFuel } from './fuel-model.js';
import type { ParsedModule } from './wasm-module.js';

/** wasmi traps when a call would exceed this many frames. */
export const MAX_CALL_DEPTH = 1000;

export const TRAP_OUT_OF_FUEL = 1;
export const TRAP_CALL_DEPTH = 2;

export interface MeterExports {
  fuel: string;
  trap: string;
  depth: string;
  /** The module's start function, re-exported so the host runs it after instantiation. */
  start?: string;
}

export interface InstrumentedModule {
  bytes: Uint8Array;
  exports: MeterExports;
}

const OP = {
  unreachable: 0x00,
  if: 0x04,
  end: 0x0b,
  call: 0x10,
  callIndirect: 0x11,
  returnCall: 0x12,
  returnCallIndirect: 0x13,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  globalGet: 0x23,
  globalSet: 0x24,
  i32Const: 0x41,
  i64Const: 0x42,
  i32Eqz: 0x45,
  i32Ne: 0x47,
  i32GtU: 0x4b,
  i64LtU: 0x54,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  i64Shl: 0x86,
  i64ShrU: 0x88,
  i64Sub: 0x7d,
  i64ExtendI32U: 0xad,
  void: 0x40,
} as const;

function uniqueExportName(taken: Set<string>, base: string): string {
  let name = base;
  while (taken.has(name)) name += '_';
  taken.add(name);
  return name;
}

interface Indices {
  fuel: number;
  trap: number;
  depth: number;
  compiledBase: number;
}

/** Scratch locals appended to every function. */
interface Scratch {
  s1: number;
  s2: number;
  d: number;
  a: number;
}

function trapWith(w: WasmWriter, g: Indices, reason: number): void {
  w.byte(OP.i32Const).s32(reason).byte(OP.globalSet).u32(g.trap).byte(OP.unreachable);
}

/** `if (fuel < cost) trap; fuel -= cost`, with `cost` pushed by `pushCost`. */
function charge(w: WasmWriter, g: Indices, pushCost: (w: WasmWriter) => void): void {
  w.byte(OP.globalGet).u32(g.fuel);
  pushCost(w);
  w.byte(OP.i64LtU).byte(OP.if).byte(OP.void);
  trapWith(w, g, TRAP_OUT_OF_FUEL);
  w.byte(OP.end);
  w.byte(OP.globalGet).u32(g.fuel);
  pushCost(w);
  w.byte(OP.i64Sub).byte(OP.globalSet).u32(g.fuel);
}

const chargeConst = (w: WasmWriter, g: Indices, cost: number): void => {
  if (cost > 0) charge(w, g, (x) => x.byte(OP.i64Const).s64(BigInt(cost)));
};
const chargeLocal = (w: WasmWriter, g: Indices, local: number): void =>
  charge(w, g, (x) => x.byte(OP.localGet).u32(local));

function instrumentBody(
  m: ParsedModule,
  definedIndex: number,
  g: Indices,
  out: WasmWriter,
): void {
  const range = m.bodies[definedIndex]!;
  const body = decodeBody(m.bytes, range.start, range.end);
  const fuel = functionFuel(m, definedIndex, body);
  const type = m.types[m.funcTypeIndices[definedIndex]!]!;
  const firstScratch = type.params.length + body.locals.length;
  const sc: Scratch = { s1: firstScratch, s2: firstScratch + 1, d: firstScratch + 2, a: firstScratch + 3 };

  const w = new WasmWriter(range.end - range.start + 256);
  // locals: the original groups, then 3 × i32 and 1 × i64 scratch locals
  const lr = new WasmReader(m.bytes, body.localsStart, body.localsEnd);
  const groups = lr.u32();
  w.u32(groups + 2).bytes(m.bytes.subarray(lr.pos, body.localsEnd));
  w.u32(3).byte(0x7f).u32(1).byte(0x7e);

  // entry: call depth, lazy-compilation fuel, entry region fuel
  w.byte(OP.globalGet).u32(g.depth).byte(OP.i32Const).s32(1).byte(OP.i32Add);
  w.byte(OP.localTee).u32(sc.d).byte(OP.globalSet).u32(g.depth);
  w.byte(OP.localGet).u32(sc.d).byte(OP.i32Const).s32(MAX_CALL_DEPTH).byte(OP.i32GtU);
  w.byte(OP.if).byte(OP.void);
  trapWith(w, g, TRAP_CALL_DEPTH);
  w.byte(OP.end);
  const compiled = g.compiledBase + definedIndex;
  w.byte(OP.globalGet).u32(compiled).byte(OP.i32Eqz).byte(OP.if).byte(OP.void);
  w.byte(OP.i32Const).s32(1).byte(OP.globalSet).u32(compiled);
  chargeConst(w, g, fuel.compileFuel);
  w.byte(OP.end);
  chargeConst(w, g, fuel.entryFuel);

  const src = m.bytes;
  body.instrs.forEach((ins, i) => {
    const op = ins.op;
    if (op === 0xfc08 || op === 0xfc0a || op === 0xfc0b) {
      // memory.init / memory.copy / memory.fill: len / 64 fuel, charged before the copy
      w.byte(OP.localTee).u32(sc.s1).byte(OP.i64ExtendI32U);
      w.byte(OP.i64Const).s64(6n).byte(OP.i64ShrU).byte(OP.localSet).u32(sc.a);
      chargeLocal(w, g, sc.a);
      w.byte(OP.localGet).u32(sc.s1);
      w.bytes(src.subarray(ins.start, ins.end));
      return;
    }
    if (op === 0x40) {
      // memory.grow: 1024 fuel per page, only when the grow succeeds
      w.byte(OP.localTee).u32(sc.s1);
      w.bytes(src.subarray(ins.start, ins.end));
      w.byte(OP.localTee).u32(sc.s2).byte(OP.i32Const).s32(-1).byte(OP.i32Ne);
      w.byte(OP.if).byte(OP.void);
      w.byte(OP.localGet).u32(sc.s1).byte(OP.i64ExtendI32U);
      w.byte(OP.i64Const).s64(10n).byte(OP.i64Shl).byte(OP.localSet).u32(sc.a);
      chargeLocal(w, g, sc.a);
      w.byte(OP.end).byte(OP.localGet).u32(sc.s2);
      return;
    }
    if (op === OP.returnCall || op === OP.returnCallIndirect) {
      // the frame is replaced: give back this frame's depth before the callee takes one
      w.byte(OP.localGet).u32(sc.d).byte(OP.i32Const).s32(1).byte(OP.i32Sub);
      w.byte(OP.globalSet).u32(g.depth);
    }
    w.bytes(src.subarray(ins.start, ins.end));
    if (op === OP.call || op === OP.callIndirect) {
      w.byte(OP.localGet).u32(sc.d).byte(OP.globalSet).u32(g.depth);
    } else if (op === 0x03 || op === 0x04 || op === 0x05) {
      const cost = fuel.regionFuel.get(i);
      if (cost !== undefined) chargeConst(w, g, cost);
    }
  });
  const content = w.finish();
  out.u32(content.length).bytes(content);
}

const SECTION_ORDER = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 10, 11];

/**
 * Returns the metered module. `fuelLimit` is baked into the fuel global's initialiser.
 * The module must already have passed `validateAppModule` (policy checks).
 */
export function instrumentModule(m: ParsedModule, fuelLimit: bigint): InstrumentedModule {
  if (fuelLimit < 0n || fuelLimit > 2n ** 63n - 1n)
    throw new CharmsError('INVALID_INPUT', `fuelLimit: must be between 0 and 2^63-1, got ${fuelLimit}`);
  const bytes = m.bytes;
  const globalCount = m.globals.length; // imported globals are refused by policy
  const nDefined = m.funcTypeIndices.length;
  const g: Indices = { fuel: globalCount, trap: globalCount + 1, depth: globalCount + 2, compiledBase: globalCount + 3 };

  const taken = new Set(m.exports.map((e) => e.name));
  const names: MeterExports = {
    fuel: uniqueExportName(taken, '__charms_meter_fuel'),
    trap: uniqueExportName(taken, '__charms_meter_trap'),
    depth: uniqueExportName(taken, '__charms_meter_depth'),
  };

  const contents = new Map<number, Uint8Array>();
  for (const s of m.sections) if (s.id !== 0) contents.set(s.id, bytes.subarray(s.start, s.end));

  // globals: original entries + meter globals
  const gw = new WasmWriter();
  gw.u32(globalCount + 3 + nDefined);
  const oldGlobals = contents.get(6);
  if (oldGlobals) {
    const r = new WasmReader(oldGlobals);
    r.u32();
    gw.bytes(oldGlobals.subarray(r.pos));
  }
  gw.byte(0x7e).byte(1).byte(OP.i64Const).s64(fuelLimit).byte(OP.end);
  for (let i = 0; i < 2 + nDefined; i++) gw.byte(0x7f).byte(1).byte(OP.i32Const).s32(0).byte(OP.end);
  contents.set(6, gw.finish());

  // exports: original entries + meter globals
  const ew = new WasmWriter();
  // The start section is replaced by an export the host calls right after instantiation,
  // so that WASI calls made by the start function can already see the exported memory.
  const hasStart = m.start !== undefined;
  if (hasStart) {
    names.start = uniqueExportName(taken, '__charms_meter_start');
    contents.delete(8);
  }
  ew.u32(m.exports.length + 3 + (hasStart ? 1 : 0));
  const oldExports = contents.get(7);
  if (oldExports) {
    const r = new WasmReader(oldExports);
    r.u32();
    ew.bytes(oldExports.subarray(r.pos));
  }
  ew.name(names.fuel).byte(3).u32(g.fuel);
  ew.name(names.trap).byte(3).u32(g.trap);
  ew.name(names.depth).byte(3).u32(g.depth);
  if (names.start) ew.name(names.start).byte(0).u32(m.start!);
  contents.set(7, ew.finish());

  // code
  if (nDefined > 0) {
    const cw = new WasmWriter(bytes.length + nDefined * 128);
    cw.u32(nDefined);
    for (let i = 0; i < nDefined; i++) instrumentBody(m, i, g, cw);
    contents.set(10, cw.finish());
  }

  const out = new WasmWriter(bytes.length * 2);
  out.bytes(bytes.subarray(0, 8));
  for (const id of SECTION_ORDER) {
    const c = contents.get(id);
    if (c) out.section(id, c);
  }
  return { bytes: out.finish(), exports: names };
}
