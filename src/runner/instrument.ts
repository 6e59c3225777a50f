/**
 * Rewrites an app module so that it meters itself the way wasmi charges fuel, and limits its
 * call depth like wasmi does. Added state lives in new exported globals (appended after the
 * module's own globals, so no existing index changes):
 *
 * - `fuel` (i64): remaining fuel, initialised to the budget inside the module so that a start
 *   function is metered too;
 * - `trap` (i32): why the module trapped on purpose (1 = out of fuel, 2 = call depth);
 * - `depth` (i32): current call depth, counted at call sites (the host sets 1 for the export it
 *   calls), so that no local is added to any function (V8 allows 50 000 per function);
 * - three scratch globals for the dynamic charges;
 * - one "compiled" flag (i32) per defined function, for wasmi's lazy-compilation fuel.
 *
 * Charges are placed at function entry and after each `loop`/`if`/`else` opcode (where wasmi
 * puts its `ConsumeFuel`), plus dynamic charges for `memory.fill/copy/init` (len / 64),
 * `table.fill/copy/init` (8 bytes per element / 64), a successful `memory.grow` (1024 per page)
 * and a successful `table.grow` (8 bytes per element / 64).
 *
 * The per-run caps (`ModuleLimits`) are written into the module: every memory's and table's
 * maximum is lowered to the cap, so a grow past it returns -1 as a grow past a declared maximum.
 */
import { CharmsError } from '../errors.js';
import { WasmReader, WasmWriter } from './wasm-bytes.js';
import { decodeBody } from './wasm-code.js';
import { functionFuel } from './fuel-model.js';
import type { ParsedModule } from './wasm-module.js';
import { OP, TYPE } from './opcodes.js';

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
  /** Scratch globals (no locals are added: a function may already use all 50 000 V8 allows). */
  s1: number;
  s2: number;
  a: number;
  compiledBase: number;
}

function trapWith(w: WasmWriter, g: Indices, reason: number): void {
  w.byte(OP.i32Const).s32(reason).byte(OP.globalSet).u32(g.trap).byte(OP.unreachable);
}

/** `if (fuel < cost) trap; fuel -= cost`, with `cost` pushed by `pushCost`. */
function charge(w: WasmWriter, g: Indices, pushCost: (w: WasmWriter) => void): void {
  w.byte(OP.globalGet).u32(g.fuel);
  pushCost(w);
  w.byte(OP.i64LtU).byte(OP.if).byte(TYPE.emptyBlock);
  trapWith(w, g, TRAP_OUT_OF_FUEL);
  w.byte(OP.end);
  w.byte(OP.globalGet).u32(g.fuel);
  pushCost(w);
  w.byte(OP.i64Sub).byte(OP.globalSet).u32(g.fuel);
}

const chargeConst = (w: WasmWriter, g: Indices, cost: number): void => {
  if (cost > 0) charge(w, g, (x) => x.byte(OP.i64Const).s64(BigInt(cost)));
};
const chargeScratch = (w: WasmWriter, g: Indices): void => charge(w, g, (x) => x.byte(OP.globalGet).u32(g.a));

/** Pops the i32 on top of the stack into `s1` and pushes it back (a `local.tee` on a global). */
const teeS1 = (w: WasmWriter, g: Indices): void => void w.byte(OP.globalSet).u32(g.s1).byte(OP.globalGet).u32(g.s1);

/** Charges `s1 >> shift` fuel (s1 as unsigned). */
function chargeS1Shifted(w: WasmWriter, g: Indices, shift: bigint): void {
  w.byte(OP.globalGet).u32(g.s1).byte(OP.i64ExtendI32U);
  w.byte(OP.i64Const).s64(shift).byte(OP.i64ShrU).byte(OP.globalSet).u32(g.a);
  chargeScratch(w, g);
}

/** Around a successful grow (result ≠ -1) of `s1` units, charge `s1 << shl >> shr` fuel. */
function chargeGrow(w: WasmWriter, g: Indices, growOp: Uint8Array, shl: bigint, shr: bigint): void {
  teeS1(w, g);
  w.bytes(growOp);
  w.byte(OP.globalSet).u32(g.s2).byte(OP.globalGet).u32(g.s2).byte(OP.i32Const).s32(-1).byte(OP.i32Ne);
  w.byte(OP.if).byte(TYPE.emptyBlock);
  w.byte(OP.globalGet).u32(g.s1).byte(OP.i64ExtendI32U);
  w.byte(OP.i64Const).s64(shl).byte(OP.i64Shl).byte(OP.i64Const).s64(shr).byte(OP.i64ShrU).byte(OP.globalSet).u32(g.a);
  chargeScratch(w, g);
  w.byte(OP.end).byte(OP.globalGet).u32(g.s2);
}

/** Before a call into module code: one more frame, trap beyond wasmi's limit. */
function enterCall(w: WasmWriter, g: Indices): void {
  w.byte(OP.globalGet).u32(g.depth).byte(OP.i32Const).s32(1).byte(OP.i32Add).byte(OP.globalSet).u32(g.depth);
  w.byte(OP.globalGet).u32(g.depth).byte(OP.i32Const).s32(MAX_CALL_DEPTH).byte(OP.i32GtU);
  w.byte(OP.if).byte(TYPE.emptyBlock);
  trapWith(w, g, TRAP_CALL_DEPTH);
  w.byte(OP.end);
}

const leaveCall = (w: WasmWriter, g: Indices): void =>
  void w.byte(OP.globalGet).u32(g.depth).byte(OP.i32Const).s32(1).byte(OP.i32Sub).byte(OP.globalSet).u32(g.depth);

function instrumentBody(m: ParsedModule, definedIndex: number, g: Indices, out: WasmWriter): void {
  const range = m.bodies[definedIndex]!;
  const body = decodeBody(m.bytes, range.start, range.end);
  const fuel = functionFuel(m, definedIndex, body);

  const w = new WasmWriter(range.end - range.start + 256);
  w.bytes(m.bytes.subarray(body.localsStart, body.localsEnd)); // locals unchanged

  // entry: lazy-compilation fuel, entry region fuel (call depth is counted at call sites)
  const compiled = g.compiledBase + definedIndex;
  w.byte(OP.globalGet).u32(compiled).byte(OP.i32Eqz).byte(OP.if).byte(TYPE.emptyBlock);
  w.byte(OP.i32Const).s32(1).byte(OP.globalSet).u32(compiled);
  chargeConst(w, g, fuel.compileFuel);
  w.byte(OP.end);
  chargeConst(w, g, fuel.entryFuel);

  const src = m.bytes;
  body.instrs.forEach((ins, i) => {
    const op = ins.op;
    const raw = src.subarray(ins.start, ins.end);
    const before = fuel.beforeFuel.get(i);
    if (before !== undefined) chargeConst(w, g, before);
    const implicitElse = fuel.implicitElseFuel.get(i);
    if (implicitElse !== undefined) {
      w.byte(OP.else); // the `if` has results = params and no else: the new arm passes them on
      chargeConst(w, g, implicitElse);
    }
    if (op === OP.memoryInit || op === OP.memoryCopy || op === OP.memoryFill) {
      // memory.init / memory.copy / memory.fill: len / 64 fuel, charged after wasmi's bounds
      // check (an out-of-bounds access traps uncharged); charging after the copy itself gives
      // the same count, and a run that then runs out of fuel fails either way
      teeS1(w, g);
      w.bytes(raw);
      chargeS1Shifted(w, g, 6n);
      return;
    }
    if (op === OP.tableInit || op === OP.tableCopy || op === OP.tableFill) {
      // table.init / table.copy / table.fill: 8 bytes per element, 64 bytes per fuel, likewise
      teeS1(w, g);
      w.bytes(raw);
      chargeS1Shifted(w, g, 3n);
      return;
    }
    if (op === OP.memoryGrow) return chargeGrow(w, g, raw, 16n, 6n); // memory.grow: 65 536 bytes per page
    if (op === OP.tableGrow) return chargeGrow(w, g, raw, 3n, 6n); // table.grow: 8 bytes per element
    const intoModule = (op === OP.call && ins.a >= m.importedFuncCount) || op === OP.callIndirect;
    if (intoModule) enterCall(w, g);
    w.bytes(raw);
    if (intoModule) leaveCall(w, g);
    else if (op === OP.loop || op === OP.if || op === OP.else) {
      const cost = fuel.regionFuel.get(i);
      if (cost !== undefined) chargeConst(w, g, cost);
    }
  });
  const content = w.finish();
  out.u32(content.length).bytes(content);
}

/** Per-run resource caps written into the module (see docs/server.md "Limits"). */
export interface ModuleLimits {
  /** Maximum linear memory, in 64 KiB pages. */
  memoryPages: number;
  /** Maximum elements per table. */
  tableElements: number;
}

function limitsBytes(w: WasmWriter, min: number, max: number): void {
  w.byte(0x01).u32(min).u32(max);
}

/** The memory section with every maximum lowered to the cap; refuses a larger initial size. */
function cappedMemories(m: ParsedModule, cap: number): Uint8Array {
  const w = new WasmWriter();
  w.u32(m.memories.length);
  for (const mem of m.memories) {
    if (mem.min > cap)
      throw new CharmsError(
        'UNSUPPORTED',
        `wasm module: the app needs ${mem.min} pages of memory at start (${mem.min / 16} MiB); the runner allows ${cap} pages (${cap / 16} MiB) per run`,
      );
    limitsBytes(w, mem.min, Math.min(mem.max ?? cap, cap));
  }
  return w.finish();
}

function cappedTables(m: ParsedModule, cap: number): Uint8Array {
  const w = new WasmWriter();
  w.u32(m.tables.length);
  for (const t of m.tables) {
    if (t.limits.min > cap)
      throw new CharmsError('UNSUPPORTED', `wasm module: a table starts with ${t.limits.min} elements; the runner allows ${cap} per table`);
    w.byte(t.elemType === 'externref' ? TYPE.externref : TYPE.funcref);
    limitsBytes(w, t.limits.min, Math.min(t.limits.max ?? cap, cap));
  }
  return w.finish();
}

let instrumentations = 0;
/** How many modules this thread has instrumented (lets tests check where the work happens). */
export const instrumentationsInThisThread = (): number => instrumentations;

const SECTION_ORDER = [1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 10, 11];

/**
 * Returns the metered module. `fuelLimit` is baked into the fuel global's initialiser.
 * The module must already have passed `validateAppModule` (policy checks).
 */
export function instrumentModule(m: ParsedModule, fuelLimit: bigint, limits: ModuleLimits): InstrumentedModule {
  if (fuelLimit < 0n || fuelLimit > 2n ** 63n - 1n) throw new CharmsError('INVALID_INPUT', `fuelLimit: must be between 0 and 2^63-1, got ${fuelLimit}`);
  instrumentations++;
  const bytes = m.bytes;
  const globalCount = m.globals.length; // imported globals are refused by policy
  const nDefined = m.funcTypeIndices.length;
  const g: Indices = {
    fuel: globalCount,
    trap: globalCount + 1,
    depth: globalCount + 2,
    s1: globalCount + 3,
    s2: globalCount + 4,
    a: globalCount + 5,
    compiledBase: globalCount + 6,
  };

  const taken = new Set(m.exports.map((e) => e.name));
  const names: MeterExports = {
    fuel: uniqueExportName(taken, '__charms_meter_fuel'),
    trap: uniqueExportName(taken, '__charms_meter_trap'),
    depth: uniqueExportName(taken, '__charms_meter_depth'),
  };

  const contents = new Map<number, Uint8Array>();
  for (const s of m.sections) if (s.id !== 0) contents.set(s.id, bytes.subarray(s.start, s.end));

  if (m.memories.length > 0) contents.set(5, cappedMemories(m, limits.memoryPages));
  if (m.tables.length > 0) contents.set(4, cappedTables(m, limits.tableElements));

  // globals: original entries + meter globals
  const gw = new WasmWriter();
  gw.u32(globalCount + 6 + nDefined);
  const oldGlobals = contents.get(6);
  if (oldGlobals) {
    const r = new WasmReader(oldGlobals);
    r.u32();
    gw.bytes(oldGlobals.subarray(r.pos));
  }
  gw.byte(TYPE.i64).byte(1).byte(OP.i64Const).s64(fuelLimit).byte(OP.end); // fuel
  for (let i = 0; i < 4; i++) gw.byte(TYPE.i32).byte(1).byte(OP.i32Const).s32(0).byte(OP.end); // trap, depth, s1, s2
  gw.byte(TYPE.i64).byte(1).byte(OP.i64Const).s64(0n).byte(OP.end); // a
  for (let i = 0; i < nDefined; i++) gw.byte(TYPE.i32).byte(1).byte(OP.i32Const).s32(0).byte(OP.end); // compiled flags
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
