/**
 * Static fuel model of wasmi 1.1.0 (the reference engine, `consume_fuel` on, default costs).
 *
 * wasmi translates wasm into a register IR and places one `ConsumeFuel` instruction at each
 * function entry, loop header, `if` arm and `else` arm. Each carries the static sum of the IR
 * instructions charged to that region (each costs 1), paid whenever the region is entered.
 * This module replays the parts of wasmi's translator (crates/wasmi/src/engine/translator at
 * v1.1.0) that decide how many IR instructions a wasm instruction becomes: operands that are
 * locals/constants are folded into instructions, constants fold, compares fuse into the
 * following branch/select/eqz, `local.set` relinks the previous result, copies are encoded as
 * wasmi encodes them (copy, copy2, copy_span/copy_many charged by length, merged, no-ops
 * dropped), and so on. Its equality with wasmi is checked on the committed corpus
 * (vectors/runner-fuel/, src/runner/fuel-corpus.test.ts) and by `npm run fuzz:fuel`.
 */
import { funcTypeOf, type FuncType, type ParsedModule, type ValType } from './wasm-module.js';
import type { BlockType, DecodedBody, Instr } from './wasm-code.js';
import { OP } from './opcodes.js';

/** Fuel charged per byte of a function body the first time it is called (7 translate + 2 validate). */
const COMPILE_FUEL_PER_BYTE = 9;

export interface FunctionFuel {
  /** Fuel for lazily compiling the function: 9 × body size. */
  compileFuel: number;
  /** Region cost at function entry (includes its own ConsumeFuel). */
  entryFuel: number;
  /**
   * Region costs keyed by the index (in `DecodedBody.instrs`) of the `loop`, `if` or `else`
   * instruction that opens the region; the charge goes right after that instruction.
   */
  regionFuel: Map<number, number>;
  /**
   * Region costs charged right before the instruction at that index: the `else` of an `if`
   * whose condition is a non-zero constant (wasmi puts its `ConsumeFuel` at the end of `then`).
   */
  beforeFuel: Map<number, number>;
  /**
   * Implicit `else` regions, keyed by the index of the `end` of an `if` with results and no
   * `else`: the instrumenter adds an `else` arm that pays it.
   */
  implicitElseFuel: Map<number, number>;
}

type Value = number | bigint | null | undefined; // undefined = constant of unknown value

/**
 * Temporaries carry `origin`, the instruction that produced them as wasmi's `TempOperand::instr`
 * (what branch and eqz fusion check; -1 when none), and `src`, the instruction whose result
 * register holds them (what select fusion and result relinking check), which survives
 * reinterpretations that drop the origin.
 */
type Operand = { k: 'local'; ty: ValType; idx: number } | { k: 'temp'; ty: ValType; origin: number; src?: number } | { k: 'imm'; ty: ValType; v: Value };

const srcOf = (o: Operand & { k: 'temp' }): number => o.src ?? o.origin;

type LastKind = 'cmp' | 'result' | 'copy' | 'copy2' | 'span' | 'other';

interface Frame {
  kind: 'func' | 'block' | 'loop' | 'if' | 'else' | 'dead';
  region: number;
  height: number;
  params: number;
  results: ValType[];
  branched: boolean;
  /** `if`: which arms are reachable. */
  reach?: 'both' | 'then' | 'else';
  thenEndReachable?: boolean;
  elseStack?: Operand[];
}

/** wasmi `SlotSpan::has_overlapping_copies`. */
function overlapping(result: number, value: number, len: number): boolean {
  return len > 1 && value < result && value + len - 1 >= result;
}

function blockSig(m: ParsedModule, bt: BlockType | undefined): FuncType {
  if (!bt || bt.kind === 'empty') return { params: [], results: [] };
  if (bt.kind === 'value') return { params: [], results: [bt.type] };
  return m.types[bt.index] ?? { params: [], results: [] };
}

// ---- constant evaluation (only what decides branches/encodings) ----------------------------

const I32_BIN: Record<number, (a: number, b: number) => number | undefined> = {
  [OP.i32Eq]: (a, b) => +(a === b),
  [OP.i32Ne]: (a, b) => +(a !== b),
  [OP.i32LtS]: (a, b) => +(a < b),
  [OP.i32LtU]: (a, b) => +(a >>> 0 < b >>> 0),
  [OP.i32GtS]: (a, b) => +(a > b),
  [OP.i32GtU]: (a, b) => +(a >>> 0 > b >>> 0),
  [OP.i32LeS]: (a, b) => +(a <= b),
  [OP.i32LeU]: (a, b) => +(a >>> 0 <= b >>> 0),
  [OP.i32GeS]: (a, b) => +(a >= b),
  [OP.i32GeU]: (a, b) => +(a >>> 0 >= b >>> 0),
  [OP.i32Add]: (a, b) => (a + b) | 0,
  [OP.i32Sub]: (a, b) => (a - b) | 0,
  [OP.i32Mul]: (a, b) => Math.imul(a, b),
  [OP.i32And]: (a, b) => a & b,
  [OP.i32Or]: (a, b) => a | b,
  [OP.i32Xor]: (a, b) => a ^ b,
  [OP.i32Shl]: (a, b) => a << b,
  [OP.i32ShrS]: (a, b) => a >> b,
  [OP.i32ShrU]: (a, b) => (a >>> b) | 0,
  [OP.i32Rotl]: (a, b) => (a << (b & 31)) | (a >>> ((32 - (b & 31)) & 31)),
  [OP.i32Rotr]: (a, b) => (a >>> (b & 31)) | (a << ((32 - (b & 31)) & 31)),
  [OP.i32DivS]: (a, b) => (b === 0 || (a === -0x80000000 && b === -1) ? undefined : (a / b) | 0),
  [OP.i32DivU]: (a, b) => (b === 0 ? undefined : ((a >>> 0) / (b >>> 0)) | 0),
  [OP.i32RemS]: (a, b) => (b === 0 ? undefined : b === -1 ? 0 : (a % b) | 0),
  [OP.i32RemU]: (a, b) => (b === 0 ? undefined : ((a >>> 0) % (b >>> 0)) | 0),
};
const I64_BIN: Record<number, (a: bigint, b: bigint) => bigint> = {
  [OP.i64Add]: (a, b) => a + b,
  [OP.i64Sub]: (a, b) => a - b,
  [OP.i64Mul]: (a, b) => a * b,
  [OP.i64And]: (a, b) => a & b,
  [OP.i64Or]: (a, b) => a | b,
  [OP.i64Xor]: (a, b) => a ^ b,
  [OP.i64Shl]: (a, b) => a << (b & 63n),
  [OP.i64ShrS]: (a, b) => a >> (b & 63n),
  [OP.i64ShrU]: (a, b) => BigInt.asUintN(64, a) >> (b & 63n),
  [OP.i64Rotl]: (a, b) => {
    const u = BigInt.asUintN(64, a);
    const k = b & 63n;
    return (u << k) | (u >> ((64n - k) & 63n));
  },
  [OP.i64Rotr]: (a, b) => {
    const u = BigInt.asUintN(64, a);
    const k = b & 63n;
    return (u >> k) | (u << ((64n - k) & 63n));
  },
};
/** Fallible 64-bit ops: undefined where wasm traps. */
const I64_DIV: Record<number, (a: bigint, b: bigint) => bigint | undefined> = {
  [OP.i64DivS]: (a, b) => (b === 0n || (a === -(2n ** 63n) && b === -1n) ? undefined : a / b),
  [OP.i64DivU]: (a, b) => (b === 0n ? undefined : BigInt.asUintN(64, a) / BigInt.asUintN(64, b)),
  [OP.i64RemS]: (a, b) => (b === 0n ? undefined : a % b),
  [OP.i64RemU]: (a, b) => (b === 0n ? undefined : BigInt.asUintN(64, a) % BigInt.asUintN(64, b)),
};
const I64_CMP: Record<number, (a: bigint, b: bigint) => boolean> = {
  [OP.i64Eq]: (a, b) => a === b,
  [OP.i64Ne]: (a, b) => a !== b,
  [OP.i64LtS]: (a, b) => a < b,
  [OP.i64LtU]: (a, b) => BigInt.asUintN(64, a) < BigInt.asUintN(64, b),
  [OP.i64GtS]: (a, b) => a > b,
  [OP.i64GtU]: (a, b) => BigInt.asUintN(64, a) > BigInt.asUintN(64, b),
  [OP.i64LeS]: (a, b) => a <= b,
  [OP.i64LeU]: (a, b) => BigInt.asUintN(64, a) <= BigInt.asUintN(64, b),
  [OP.i64GeS]: (a, b) => a >= b,
  [OP.i64GeU]: (a, b) => BigInt.asUintN(64, a) >= BigInt.asUintN(64, b),
};

// Floats: JS numbers (f32 rounded with Math.fround). Only what wasm defines exactly; NaN
// payloads are not modelled (a NaN constant is "some NaN").
const fmin = (a: number, b: number): number =>
  Number.isNaN(a) || Number.isNaN(b) ? Number.NaN : a === b ? (Object.is(a, -0) || Object.is(b, -0) ? -0 : a) : Math.min(a, b);
const fmax = (a: number, b: number): number =>
  Number.isNaN(a) || Number.isNaN(b) ? Number.NaN : a === b ? (Object.is(a, 0) || Object.is(b, 0) ? 0 : a) : Math.max(a, b);
const signBit = (x: number): boolean => x < 0 || Object.is(x, -0) || (Number.isNaN(x) && false);
const fcopysign = (a: number, b: number): number => (signBit(a) === signBit(b) ? a : -a);
const F_BIN: ((a: number, b: number) => number)[] = [(a, b) => a + b, (a, b) => a - b, (a, b) => a * b, (a, b) => a / b, fmin, fmax, fcopysign];
const F_CMP: ((a: number, b: number) => boolean)[] = [
  (a, b) => a === b,
  (a, b) => a !== b,
  (a, b) => a < b,
  (a, b) => a > b,
  (a, b) => a <= b,
  (a, b) => a >= b,
];
const nearest = (x: number): number => {
  if (!Number.isFinite(x) || x === 0) return x;
  const r = Math.round(x);
  const v = Math.abs(x - Math.trunc(x)) === 0.5 ? 2 * Math.round(x / 2) : r;
  return v === 0 ? (x < 0 ? -0 : 0) : v;
};
const F_UN: ((a: number) => number)[] = [Math.abs, (a) => -a, Math.ceil, Math.floor, Math.trunc, nearest, Math.sqrt];

function evalFloat(op: number, a: Value, b: Value): Value {
  if (typeof a !== 'number') return undefined;
  if (op >= OP.f32Add && op <= OP.f32Copysign && typeof b === 'number') return Math.fround(F_BIN[op - OP.f32Add]!(a, b));
  if (op >= OP.f64Add && op <= OP.f64Copysign && typeof b === 'number') return F_BIN[op - OP.f64Add]!(a, b);
  if (op >= OP.f32Eq && op < OP.f32Eq + 6 && typeof b === 'number') return +F_CMP[op - OP.f32Eq]!(a, b);
  if (op >= OP.f64Eq && op < OP.f64Eq + 6 && typeof b === 'number') return +F_CMP[op - OP.f64Eq]!(a, b);
  if (op >= OP.f32Abs && op < OP.f32Abs + 7) return Math.fround(F_UN[op - OP.f32Abs]!(a));
  if (op >= OP.f64Abs && op < OP.f64Abs + 7) return F_UN[op - OP.f64Abs]!(a);
  return undefined;
}

function evalBinary(op: number, a: Value, b: Value): Value {
  if (isFloatOp(op)) return evalFloat(op, a, b);
  if (typeof a === 'number' && typeof b === 'number' && I32_BIN[op]) return I32_BIN[op]!(a, b);
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    if (I64_BIN[op]) return BigInt.asIntN(64, I64_BIN[op]!(a, b));
    if (I64_DIV[op]) {
      const v = I64_DIV[op]!(a, b);
      return v === undefined ? undefined : BigInt.asIntN(64, v);
    }
    if (I64_CMP[op]) return +I64_CMP[op]!(a, b);
  }
  return undefined;
}

function popcount(u: bigint): number {
  let n = 0;
  for (let x = u; x; x &= x - 1n) n++;
  return n;
}

/** Integer ranges of the truncations, in the order i32 f32 s/u, i32 f64 s/u, i64 f32 s/u, i64 f64 s/u. */
const TRUNC_RANGE: [bigint, bigint][] = [
  [-(2n ** 31n), 2n ** 31n - 1n],
  [0n, 2n ** 32n - 1n],
  [-(2n ** 31n), 2n ** 31n - 1n],
  [0n, 2n ** 32n - 1n],
  [-(2n ** 63n), 2n ** 63n - 1n],
  [0n, 2n ** 64n - 1n],
  [-(2n ** 63n), 2n ** 63n - 1n],
  [0n, 2n ** 64n - 1n],
];
/** Trapping truncations (`i32.trunc_f32_s` …) in the TRUNC_RANGE order. */
const TRAPPING_TRUNCS = [0xa8, 0xa9, 0xaa, 0xab, 0xae, 0xaf, 0xb0, 0xb1];

/** A trapping truncation of a constant: its value, or undefined where wasm traps. */
function truncConst(op: number, a: number): number | bigint | undefined {
  const k = TRAPPING_TRUNCS.indexOf(op);
  if (Number.isNaN(a) || !Number.isFinite(a)) return undefined;
  const t = BigInt(Math.trunc(a));
  const [lo, hi] = TRUNC_RANGE[k]!;
  if (t < lo || t > hi) return undefined;
  return k < 4 ? Number(BigInt.asIntN(32, t)) : BigInt.asIntN(64, t);
}

/** Float arithmetic, compares and unary ops (their operands are floats). */
const isFloatOp = (op: number): boolean => (op >= OP.f32Eq && op < OP.f64Eq + 6) || (op >= OP.f32Abs && op <= OP.f64Copysign);

function evalUnary(op: number, a: Value): Value {
  if (isFloatOp(op)) return evalFloat(op, a, undefined);
  // int → float conversions and f32 ↔ f64
  if (op === OP.f32ConvertI32S && typeof a === 'number') return Math.fround(a);
  if (op === OP.f32ConvertI32S + 1 && typeof a === 'number') return Math.fround(a >>> 0);
  if (op === OP.f64ConvertI32S && typeof a === 'number') return a;
  if (op === OP.f64ConvertI32S + 1 && typeof a === 'number') return a >>> 0;
  if (op === OP.f64PromoteF32 && typeof a === 'number') return a;
  if (op === OP.f32DemoteF64 && typeof a === 'number') return Math.fround(a);
  if (typeof a === 'bigint') {
    if (op === OP.f32ConvertI64S) return Math.fround(Number(a));
    if (op === OP.f32ConvertI64S + 1) return Math.fround(Number(BigInt.asUintN(64, a)));
    if (op === OP.f64ConvertI64S) return Number(a);
    if (op === OP.f64ConvertI64S + 1) return Number(BigInt.asUintN(64, a));
  }
  if (op >= OP.i32TruncSatF32S && op <= OP.i64TruncSatF64U && typeof a === 'number') {
    const k = op - OP.i32TruncSatF32S;
    const [lo, hi] = TRUNC_RANGE[k]!;
    if (Number.isNaN(a)) return k < 4 ? 0 : 0n;
    const t = BigInt(Math.trunc(Math.min(Math.max(a, Number(lo)), Number(hi))));
    const c = t < lo ? lo : t > hi ? hi : t;
    return k < 4 ? Number(BigInt.asIntN(32, c)) : BigInt.asIntN(64, c);
  }
  if (op === OP.i32Eqz && typeof a === 'number') return +(a === 0);
  if (op === OP.i64Eqz && typeof a === 'bigint') return +(a === 0n);
  if (op === OP.i32WrapI64 && typeof a === 'bigint') return Number(BigInt.asIntN(32, a));
  if (op === OP.i64ExtendI32S && typeof a === 'number') return BigInt(a);
  if (op === OP.i64ExtendI32U && typeof a === 'number') return BigInt(a >>> 0);
  if (typeof a === 'number') {
    if (op === OP.i32Clz) return Math.clz32(a);
    if (op === OP.i32Ctz) return a === 0 ? 32 : 31 - Math.clz32(a & -a);
    if (op === OP.i32Popcnt) return popcount(BigInt(a >>> 0));
    if (op === OP.i32Extend8S) return (a << 24) >> 24;
    if (op === OP.i32Extend16S) return (a << 16) >> 16;
  }
  if (typeof a === 'bigint') {
    const u = BigInt.asUintN(64, a);
    if (op === OP.i64Clz) return BigInt(u === 0n ? 64 : 64 - u.toString(2).length);
    if (op === OP.i64Ctz) return BigInt(u === 0n ? 64 : u.toString(2).length - u.toString(2).lastIndexOf('1') - 1);
    if (op === OP.i64Popcnt) return BigInt(popcount(u));
    if (op === OP.i64Extend8S) return BigInt.asIntN(8, a);
    if (op === OP.i64Extend16S) return BigInt.asIntN(16, a);
    if (op === OP.i64Extend32S) return BigInt.asIntN(32, a);
  }
  return undefined;
}

// ---- opcode classification ------------------------------------------------------------------

/** Result type of a unary/binary numeric opcode, and its arity. */
function numericSig(op: number): { arity: 1 | 2; result: ValType; cmp: boolean } | undefined {
  if (op === OP.i32Eqz || op === OP.i64Eqz) return { arity: 1, result: 'i32', cmp: false };
  if ((op >= OP.i32Eq && op <= OP.i32GeU) || (op >= OP.i64Eq && op <= OP.f64Ge)) return { arity: 2, result: 'i32', cmp: true };
  if (op >= OP.i32Clz && op <= OP.i32Popcnt) return { arity: 1, result: 'i32', cmp: false };
  if (op >= OP.i32Add && op <= OP.i32Rotr) return { arity: 2, result: 'i32', cmp: op >= OP.i32And && op <= OP.i32Xor };
  if (op >= OP.i64Clz && op <= OP.i64Popcnt) return { arity: 1, result: 'i64', cmp: false };
  if (op >= OP.i64Add && op <= OP.i64Rotr) return { arity: 2, result: 'i64', cmp: op >= OP.i64And && op <= OP.i64Xor };
  if (op >= OP.f32Abs && op <= OP.f32Sqrt) return { arity: 1, result: 'f32', cmp: false };
  if (op >= OP.f32Add && op <= OP.f32Copysign) return { arity: 2, result: 'f32', cmp: false };
  if (op >= OP.f64Abs && op <= OP.f64Sqrt) return { arity: 1, result: 'f64', cmp: false };
  if (op >= OP.f64Add && op <= OP.f64Copysign) return { arity: 2, result: 'f64', cmp: false };
  if (
    op === OP.i32WrapI64 ||
    (op >= OP.i32TruncF32S && op <= OP.i32TruncF64U) ||
    op === OP.i32ReinterpretF32 ||
    op === OP.i32Extend8S ||
    op === OP.i32Extend16S
  )
    return { arity: 1, result: 'i32', cmp: false };
  if ((op >= OP.i64ExtendI32S && op <= OP.i64TruncF64U) || op === OP.i64ReinterpretF64 || (op >= OP.i64Extend8S && op <= OP.i64Extend32S))
    return { arity: 1, result: 'i64', cmp: false };
  if ((op >= OP.f32ConvertI32S && op <= OP.f32DemoteF64) || op === OP.f32ReinterpretI32) return { arity: 1, result: 'f32', cmp: false };
  if ((op >= OP.f64ConvertI32S && op <= OP.f64PromoteF32) || op === OP.f64ReinterpretI64) return { arity: 1, result: 'f64', cmp: false };
  if (op >= OP.i32TruncSatF32S && op <= OP.i32TruncSatF64U) return { arity: 1, result: 'i32', cmp: false };
  if (op >= OP.i64TruncSatF32S && op <= OP.i64TruncSatF64U) return { arity: 1, result: 'i64', cmp: false };
  return undefined;
}

/** Translated without an instruction (`i64.extend_i32_u` and the reinterpretations). */
const REINTERPRETS = new Set<number>([OP.i64ExtendI32U, OP.i32ReinterpretF32, OP.i64ReinterpretF64, OP.f32ReinterpretI32, OP.f64ReinterpretI64]);

const LOAD_TYPES: ValType[] = ['i32', 'i64', 'f32', 'f64', 'i32', 'i32', 'i32', 'i32', 'i64', 'i64', 'i64', 'i64', 'i64', 'i64'];

/** Whether wasmi can encode a register copy of this constant inline (else: constant slot, no copy). */
function copyImmInline(ty: ValType, v: Value): boolean {
  if (ty === 'i32' || ty === 'f32') return true;
  if (ty === 'i64') return typeof v === 'bigint' ? v >= -(2n ** 31n) && v < 2n ** 31n : true;
  if (ty === 'f64') return typeof v === 'number' ? Math.fround(v) === v || Number.isNaN(v) : true;
  return false;
}

// ---- the translator replay ------------------------------------------------------------------

class FuelReplay {
  private stack: Operand[] = [];
  private frames: Frame[] = [];
  private reachable = true;
  private nextId = 0;
  /**
   * The last IR instruction (wasmi `last_instr`): what fusion, result relinking and copy merging
   * look at. Copies keep their slots: `result`/`value` (copy), `result`, `value`, `value1`
   * (copy2), `result`, `value`, `len` (copy_span).
   */
  private last: { id: number; kind: LastKind; result?: number; value?: number; value1?: number; len?: number } | undefined;
  private regionCost: number[] = [];
  private regionAt = new Map<number, number>(); // instr index → region id
  private beforeAt = new Map<number, number>();
  private implicitElseAt = new Map<number, number>();
  private readonly localTypes: ValType[];

  constructor(
    private readonly m: ParsedModule,
    private readonly type: FuncType,
    body: DecodedBody,
  ) {
    this.localTypes = [...type.params, ...body.locals];
  }

  run(instrs: Instr[]): { entry: number; regions: Map<number, number>; before: Map<number, number>; implicitElse: Map<number, number> } {
    const entry = this.newRegion();
    this.frames.push({ kind: 'func', region: entry, height: 0, params: 0, results: this.type.results, branched: false });
    for (let i = 0; i < instrs.length; i++) this.step(instrs[i]!, i);
    const costs = (at: Map<number, number>) => new Map([...at].map(([i, id]) => [i, this.regionCost[id]!] as [number, number]));
    return { entry: this.regionCost[entry]!, regions: costs(this.regionAt), before: costs(this.beforeAt), implicitElse: costs(this.implicitElseAt) };
  }

  /** Region of the innermost live frame (wasmi's `stack.consume_fuel_instr()`). */
  private get region(): number {
    for (let i = this.frames.length - 1; i >= 0; i--) if (this.frames[i]!.kind !== 'dead') return this.frames[i]!.region;
    return 0;
  }

  private newRegion(at?: number): number {
    const id = this.regionCost.length;
    this.regionCost.push(1); // the ConsumeFuel instruction itself
    if (at !== undefined) this.regionAt.set(at, id);
    this.last = { id: this.nextId++, kind: 'other' };
    return id;
  }

  private emit(kind: LastKind, region = this.region, cost = 1): number {
    this.regionCost[region]! += cost;
    const id = this.nextId++;
    this.last = { id, kind };
    return id;
  }

  private pushResult(ty: ValType, kind: LastKind): void {
    const id = this.emit(kind);
    this.stack.push({ k: 'temp', ty, origin: id });
  }

  private pop(): Operand {
    return this.stack.pop() ?? { k: 'temp', ty: 'i32', origin: -1 };
  }

  private slotOf(o: Operand, pos: number): number {
    if (o.k === 'local') return o.idx;
    if (o.k === 'temp') return this.localTypes.length + pos;
    return -1 - pos; // function-local constant slot
  }

  /** Slot of an operand for copies; constants get a slot no other operand has. */
  private copySlot(o: Operand, pos: number): number {
    return o.k === 'imm' ? -1_000_000 - this.nextId++ : this.slotOf(o, pos);
  }

  /**
   * wasmi `encode_copy`: a register copy `result ← value`, none if it is a no-op, merged into
   * the previous copy (copy → copy2 → copy_span, at no extra fuel) where wasmi merges.
   */
  private copy(result: number, value: Operand, valuePos: number, region = this.region): void {
    if (value.k === 'imm' && copyImmInline(value.ty, value.v)) {
      this.emit('other', region); // copy_imm32 & co: not mergeable
      return;
    }
    const v = this.copySlot(value, valuePos);
    if (v === result) return;
    const l = this.last;
    if (l?.kind === 'copy' && v !== l.result) {
      if (result === l.result! + 1) {
        this.last = { id: l.id, kind: 'copy2', result: l.result!, value: l.value!, value1: v };
        return;
      }
      if (result === l.result! - 1) {
        this.last = { id: l.id, kind: 'copy2', result, value: v, value1: l.value! };
        return;
      }
    }
    if (l?.kind === 'copy2' && l.value! + 1 === l.value1 && result === l.result! + 2 && v === l.value1! + 1 && v !== l.result && v !== l.result! + 1) {
      this.last = { id: l.id, kind: 'span', result: l.result!, value: l.value!, len: 3 };
      return;
    }
    if (l?.kind === 'span' && result === l.result! + l.len! && v === l.value! + l.len! && !overlapping(l.result!, l.value!, l.len! + 1)) {
      this.last = { id: l.id, kind: 'span', result: l.result!, value: l.value!, len: l.len! + 1 };
      return;
    }
    const id = this.emit('copy', region);
    this.last = { id, kind: 'copy', result, value: v };
  }

  /** A copy pushed without merging (wasmi's local preservation), which later copies may merge with. */
  private plainCopy(result: number, value: Operand, valuePos: number, region = this.region): void {
    const id = this.emit('copy', region);
    this.last = { id, kind: 'copy', result, value: this.copySlot(value, valuePos) };
  }

  /** wasmi `encode_copies`: the top `n` operands into the slots from `results` on. */
  private encodeCopies(results: number, n: number, region = this.region): void {
    const base = this.stack.length - n;
    if (n <= 0 || base < 0) return;
    if (n === 1) return this.copy(results, this.stack[base]!, base, region);
    const slots = this.stack.slice(base).map((o, i) => this.copySlot(o, base + i));
    if (n === 2) {
      if (slots[0] === results && slots[1] === results + 1) return;
      const id = this.emit('copy2', region);
      this.last = { id, kind: 'copy2', result: results, value: slots[0]!, value1: slots[1]! };
      return;
    }
    let a = 0;
    while (a < n && this.stack[base + a]!.k !== 'imm' && slots[a] === results + a) a++;
    let b = n;
    while (b > a && this.stack[base + b - 1]!.k !== 'imm' && slots[b - 1] === results + b - 1) b--;
    const k = b - a;
    if (k === 0) return;
    if (k === 1) return this.copy(results + a, this.stack[base + a]!, base + a, region);
    if (k === 2) {
      const id = this.emit('copy2', region);
      this.last = { id, kind: 'copy2', result: results + a, value: slots[a]!, value1: slots[a + 1]! };
      return;
    }
    // copy_span / copy_many: charged by the number of values only (8 bytes each, 64 per fuel)
    const contiguous = this.stack.slice(base + a, base + b).every((o, i) => o.k !== 'imm' && slots[a + i] === slots[a]! + i);
    const id = this.emit(contiguous ? 'span' : 'other', region, Math.floor((n * 8) / 64));
    this.last = contiguous ? { id, kind: 'span', result: results + a, value: slots[a]!, len: n } : { id, kind: 'other' };
  }

  /** wasmi `move_operands_to_temp`: the top `n` non-temporary operands copied to their temp slots, top first. */
  private moveToTemps(n: number): void {
    for (let d = 0; d < n; d++) {
      const pos = this.stack.length - 1 - d;
      const o = this.stack[pos];
      if (!o || o.k === 'temp') continue;
      this.copy(this.localTypes.length + pos, o, pos);
      this.stack[pos] = { k: 'temp', ty: o.ty, origin: -1 };
    }
  }

  /** wasmi `immediate_to_reg`: constants not encodable inline get a register copy. */
  private immToReg(o: Operand): void {
    if (o.k === 'imm' && copyImmInline(o.ty, o.v)) this.emit('other');
  }

  private preserveAllLocals(): void {
    for (let p = this.stack.length - 1; p >= 0; p--) {
      const o = this.stack[p]!;
      if (o.k !== 'local') continue;
      this.plainCopy(this.localTypes.length + p, o, p);
      this.stack[p] = { k: 'temp', ty: o.ty, origin: -1 };
    }
  }

  /** wasmi `try_form_regspan`: the top `n` operands sit in consecutive slots (no constants). */
  private formsSpan(n: number): boolean {
    const base = this.stack.length - n;
    let prev = -2;
    for (let p = base; p < this.stack.length; p++) {
      const o = this.stack[p]!;
      if (o.k === 'imm') return false;
      const slot = this.slotOf(o, p);
      if (p > base && slot !== prev + 1) return false;
      prev = slot;
    }
    return true;
  }

  private isFusableCmp(o: Operand): boolean {
    return o.k === 'temp' && this.last !== undefined && o.origin === this.last.id && this.last.kind === 'cmp';
  }

  /** Conditional branch on `cond` (`br_if`/`if` lowering): fused into the compare when possible. */
  private branchOn(cond: Operand): void {
    if (this.isFusableCmp(cond)) {
      this.last = { id: this.nextId++, kind: 'other' }; // fused branch replaces the compare
      return;
    }
    this.emit('other');
  }

  private branchParams(f: Frame): number {
    return f.kind === 'loop' ? f.params : f.results.length;
  }

  /** Copies the top `n` operands into the result slots of frame `f` (no-ops skipped). */
  private copyBranchValues(f: Frame, region = this.region): void {
    this.encodeCopies(this.localTypes.length + f.height, this.branchParams(f), region);
  }

  private encodeReturn(region = this.region): void {
    this.emit('other', region);
  }

  private pushFrameResults(f: Frame): void {
    this.stack.length = Math.min(this.stack.length, f.height);
    for (const ty of f.results) this.stack.push({ k: 'temp', ty, origin: -1 });
  }

  private resetLast(): void {
    this.last = undefined;
  }

  private br(depth: number): void {
    const f = this.frames[this.frames.length - 1 - depth];
    if (!f) return;
    if (f.kind === 'func') {
      this.encodeReturn();
    } else {
      f.branched = true;
      this.copyBranchValues(f);
      this.emit('other');
    }
    this.reachable = false;
  }

  private step(ins: Instr, index: number): void {
    const op = ins.op;
    // Structured control first: these run even in unreachable code.
    switch (op) {
      case OP.block:
      case OP.loop:
      case OP.if:
        return this.open(ins, index);
      case OP.else:
        return this.else(index);
      case OP.end:
        return this.end(index);
    }
    if (!this.reachable) return;
    const num = numericSig(op);
    if (num) return this.numeric(op, num);
    switch (op) {
      case OP.unreachable: // unreachable → trap instruction
        this.emit('other');
        this.reachable = false;
        return;
      case OP.nop:
        return;
      case OP.br:
        return this.br(ins.a);
      case OP.brIf:
        return this.brIf(ins.a);
      case OP.brTable:
        return this.brTable(ins);
      case OP.return:
        this.encodeReturn();
        this.reachable = false;
        return;
      case OP.call:
      case OP.returnCall:
        return this.call(funcTypeOf(this.m, ins.a), 0, op === OP.returnCall);
      case OP.callIndirect:
      case OP.returnCallIndirect:
        return this.call(this.m.types[ins.a] ?? { params: [], results: [] }, 1, op === OP.returnCallIndirect);
      case OP.drop:
        this.pop();
        return;
      case OP.select:
      case OP.selectTyped:
        return this.select();
      case OP.localGet:
        this.stack.push({ k: 'local', ty: this.localTypes[ins.a] ?? 'i32', idx: ins.a });
        return;
      case OP.localSet:
      case OP.localTee:
        return this.localSet(ins.a, op === OP.localTee);
      case OP.globalGet: {
        const g = this.m.globals[ins.a];
        if (g && !g.mutable && g.constValue !== undefined) {
          this.stack.push({ k: 'imm', ty: g.type, v: g.constValue });
          return;
        }
        return this.pushResult(g?.type ?? 'i32', 'result');
      }
      case OP.globalSet:
        this.pop();
        this.emit('other');
        return;
      case OP.tableGet:
        this.pop();
        return this.pushResult('funcref', 'result');
      case OP.tableSet:
        this.pop();
        this.pop();
        this.emit('other');
        return;
      case OP.memorySize:
        return this.pushResult('i32', 'result');
      case OP.memoryGrow: {
        const delta = this.pop();
        if (!(delta.k === 'imm' && delta.v === 0)) this.immToReg(delta);
        return this.pushResult('i32', 'result');
      }
      case OP.i32Const:
        this.stack.push({ k: 'imm', ty: 'i32', v: ins.a });
        return;
      case OP.i64Const:
        this.stack.push({ k: 'imm', ty: 'i64', v: ins.big });
        return;
      case OP.f32Const:
        this.stack.push({ k: 'imm', ty: 'f32', v: ins.f });
        return;
      case OP.f64Const:
        this.stack.push({ k: 'imm', ty: 'f64', v: ins.f });
        return;
      case OP.refNull:
        this.stack.push({ k: 'imm', ty: 'funcref', v: null });
        return;
      case OP.refIsNull:
        this.pop();
        return this.pushResult('i32', 'result');
      case OP.refFunc:
        return this.pushResult('funcref', 'result');
      case OP.memoryInit:
      case OP.memoryCopy:
      case OP.tableInit:
      case OP.tableCopy: {
        // table.copy
        const len = this.pop();
        const src = this.pop();
        const dst = this.pop();
        this.immToReg(dst);
        this.immToReg(src);
        this.immToReg(len);
        this.emit('other');
        return;
      }
      case OP.memoryFill: {
        // memory.fill: the byte value may stay an immediate
        const len = this.pop();
        this.pop();
        const dst = this.pop();
        this.immToReg(dst);
        this.immToReg(len);
        this.emit('other');
        return;
      }
      case OP.dataDrop:
      case OP.elemDrop:
        this.emit('other');
        return;
      case OP.tableGrow: {
        const delta = this.pop();
        const value = this.pop();
        if (!(delta.k === 'imm' && delta.v === 0)) {
          this.immToReg(value);
          this.immToReg(delta);
        }
        return this.pushResult('i32', 'result');
      }
      case OP.tableSize:
        return this.pushResult('i32', 'result');
      case OP.tableFill: {
        const len = this.pop();
        const value = this.pop();
        const dst = this.pop();
        this.immToReg(dst);
        this.immToReg(value);
        this.immToReg(len);
        this.emit('other');
        return;
      }
    }
    if (op >= OP.i32Load && op <= OP.i64Load32U) {
      this.pop();
      return this.pushResult(LOAD_TYPES[op - OP.i32Load]!, 'result');
    }
    if (op >= OP.i32Store && op <= OP.i64Store32) {
      this.pop();
      this.pop();
      this.emit('other');
    }
  }

  private numeric(op: number, sig: { arity: 1 | 2; result: ValType; cmp: boolean }): void {
    if (sig.arity === 1) {
      const a = this.pop();
      if (REINTERPRETS.has(op) && a.k !== 'imm') {
        // wasmi `translate_reinterpret`: no instruction, the operand is only retyped
        this.stack.push(a.k === 'temp' ? { k: 'temp', ty: sig.result, origin: -1, src: srcOf(a) } : { ...a, ty: sig.result });
        return;
      }
      if (a.k === 'imm') {
        if (TRAPPING_TRUNCS.includes(op) && typeof a.v === 'number') {
          const v = truncConst(op, a.v);
          if (v === undefined) {
            // wasmi `translate_unary_fallible`: a constant that cannot convert is a trap
            this.emit('other');
            this.reachable = false;
            return;
          }
          this.stack.push({ k: 'imm', ty: sig.result, v });
          return;
        }
        this.stack.push({ k: 'imm', ty: sig.result, v: evalUnary(op, a.v) });
        return;
      }
      if (op === OP.i32Eqz || op === OP.i64Eqz) return this.eqzLike(a);
      return this.pushResult(sig.result, 'result');
    }
    const b = this.pop();
    const a = this.pop();
    if ((op === OP.f32Copysign || op === OP.f64Copysign) && a.k === 'local' && b.k === 'local' && a.idx === b.idx) {
      this.stack.push(a); // wasmi: `copysign x x` is `x`
      return;
    }
    if ((op >= OP.i32DivS && op <= OP.i32RemU) || (op >= OP.i64DivS && op <= OP.i64RemU)) {
      // wasmi `translate_divrem`: a division by a constant zero (or a constant overflow) is a trap
      const known = (o: Operand) => o.k === 'imm' && (typeof o.v === 'number' || typeof o.v === 'bigint');
      const zero = b.k === 'imm' && (b.v === 0 || b.v === 0n);
      if (zero || (known(a) && known(b) && evalBinary(op, a.k === 'imm' ? a.v : 0, b.k === 'imm' ? b.v : 0) === undefined)) {
        this.emit('other');
        this.reachable = false;
        return;
      }
    }
    if (a.k === 'imm' && b.k === 'imm') {
      this.stack.push({ k: 'imm', ty: sig.result, v: evalBinary(op, a.v, b.v) });
      return;
    }
    // wasmi `translate_shift`: by a multiple of the bit width is a no-op, of a zero is zero
    if ((op >= OP.i32Shl && op <= OP.i32Rotr) || (op >= OP.i64Shl && op <= OP.i64Rotr)) {
      if (b.k === 'imm' && (typeof b.v === 'number' ? (b.v & 31) === 0 : typeof b.v === 'bigint' && (b.v & 63n) === 0n)) {
        this.stack.push(a);
        return;
      }
      if (a.k === 'imm' && (a.v === 0 || a.v === 0n)) {
        this.stack.push(a);
        return;
      }
    }
    // `x == 0` / `x != 0` on a fresh compare result: wasmi negates/keeps the compare in place.
    const isEq = op === OP.i32Eq || op === OP.i64Eq;
    const isNe = op === OP.i32Ne || op === OP.i64Ne;
    if (isEq || isNe) {
      const zero = (o: Operand) => o.k === 'imm' && (o.v === 0 || o.v === 0n);
      const other = zero(b) ? a : zero(a) ? b : undefined;
      if (other) return this.eqzLike(other);
    }
    this.pushResult(sig.result, sig.cmp ? 'cmp' : 'result');
  }

  private eqzLike(a: Operand): void {
    if (this.isFusableCmp(a)) {
      const id = this.nextId++;
      this.last = { id, kind: 'cmp' };
      this.stack.push({ k: 'temp', ty: 'i32', origin: id });
      return;
    }
    this.pushResult('i32', 'cmp');
  }

  private localSet(idx: number, tee: boolean): void {
    const input = this.pop();
    if (input.k === 'local' && input.idx === idx) {
      if (tee) this.stack.push(input);
      return;
    }
    for (let p = this.stack.length - 1; p >= 0; p--) {
      const o = this.stack[p]!;
      if (o.k === 'local' && o.idx === idx) {
        this.plainCopy(this.localTypes.length + p, o, p);
        this.stack[p] = { k: 'temp', ty: o.ty, origin: -1 };
      }
    }
    if (tee) this.stack.push(input.k === 'imm' ? input : { k: 'local', ty: input.ty, idx });
    const l = this.last;
    if (input.k === 'temp' && l !== undefined && srcOf(input) === l.id && (l.kind === 'result' || l.kind === 'cmp' || l.kind === 'copy')) {
      this.last = { id: l.id, kind: 'other' }; // result rewritten in place
      return;
    }
    this.copy(idx, input, this.stack.length - (tee ? 1 : 0));
  }

  private select(): void {
    const cond = this.pop();
    const f = this.pop();
    const t = this.pop();
    const same =
      (t.k === 'local' && f.k === 'local' && t.idx === f.idx) ||
      (t.k === 'imm' && f.k === 'imm' && t.v !== undefined && f.v !== undefined && Object.is(t.v, f.v) && t.ty === f.ty);
    if (same) {
      this.stack.push(t);
      return;
    }
    if (cond.k === 'imm') {
      const pickTrue = cond.v !== 0;
      const picked = pickTrue ? t : f;
      if (picked.k === 'temp' && !pickTrue) return this.pushResult(picked.ty, 'result');
      this.stack.push(picked);
      return;
    }
    this.immToReg(t);
    this.immToReg(f);
    if (cond.k === 'temp' && this.last?.kind === 'cmp' && srcOf(cond) === this.last.id) {
      const id = this.nextId++;
      this.last = { id, kind: 'result' };
      this.stack.push({ k: 'temp', ty: t.ty, origin: id });
      return;
    }
    this.pushResult(t.ty, 'result');
  }

  private call(type: FuncType, extraPops: number, tail: boolean): void {
    for (let i = 0; i < extraPops; i++) this.pop();
    for (let i = 0; i < type.params.length; i++) this.pop();
    // One instruction (`FuelCostsProvider::call`); parameters are not charged.
    const id = this.emit(type.results.length === 1 ? 'result' : 'other');
    if (tail) {
      this.reachable = false;
      return;
    }
    for (const ty of type.results) this.stack.push({ k: 'temp', ty, origin: type.results.length === 1 ? id : -1 });
  }

  private brIf(depth: number): void {
    const cond = this.pop();
    if (cond.k === 'imm') {
      if (cond.v !== 0) this.br(depth);
      return;
    }
    const f = this.frames[this.frames.length - 1 - depth];
    if (!f) return;
    f.branched = true;
    const n = this.branchParams(f);
    const heightMatches = f.height === this.stack.length - n;
    const onlyTemps = this.stack.slice(this.stack.length - n).every((o) => o.k === 'temp');
    if (n === 0 || (heightMatches && onlyTemps)) return this.branchOn(cond);
    this.branchOn(cond);
    this.copyBranchValues(f);
    this.emit('other');
  }

  private brTable(ins: Instr): void {
    const index = this.pop();
    const targets = ins.targets ?? [];
    if (targets.length === 0) return this.br(ins.a);
    if (index.k === 'imm') {
      const i = typeof index.v === 'number' ? index.v >>> 0 : -1;
      return this.br(i >= 0 && i < targets.length ? targets[i]! : ins.a);
    }
    if (targets.every((t) => t === ins.a)) return this.br(ins.a);
    const def = this.frames[this.frames.length - 1 - ins.a];
    const n = def ? this.branchParams(def) : 0;
    if (n > 0 && !this.formsSpan(n)) this.moveToTemps(n); // wasmi `try_form_regspan_or_move`
    this.emit('other');
    for (const t of [...targets, ins.a]) {
      const f = this.frames[this.frames.length - 1 - t];
      if (f) f.branched = true;
    }
    this.reachable = false;
  }

  private open(ins: Instr, index: number): void {
    const sig = blockSig(this.m, ins.bt);
    if (!this.reachable) {
      this.frames.push({ kind: 'dead', region: 0, height: 0, params: 0, results: [], branched: false });
      return;
    }
    const frameOf = (kind: Frame['kind'], region: number, height: number): Frame => ({
      kind,
      region,
      height,
      params: sig.params.length,
      results: sig.results,
      branched: false,
    });
    if (ins.op === OP.block) {
      this.preserveAllLocals();
      this.frames.push(frameOf('block', this.region, this.stack.length - sig.params.length));
      return;
    }
    if (ins.op === OP.loop) {
      this.preserveAllLocals();
      const base = this.stack.length - sig.params.length;
      this.moveToTemps(sig.params.length);
      const region = this.newRegion(index);
      this.resetLast();
      this.frames.push(frameOf('loop', region, base));
      return;
    }
    // if
    const cond = this.pop();
    this.preserveAllLocals();
    const height = this.stack.length - sig.params.length;
    let frame: Frame;
    if (cond.k === 'imm') {
      const taken = cond.v !== 0;
      frame = frameOf('if', this.region, height);
      frame.reach = taken ? 'then' : 'else';
      if (!taken) this.reachable = false;
    } else {
      this.branchOn(cond);
      frame = frameOf('if', this.newRegion(index), height);
      frame.reach = 'both';
    }
    frame.elseStack = this.stack.slice();
    this.frames.push(frame);
  }

  private else(index: number): void {
    const f = this.frames.pop();
    if (!f || f.kind === 'dead') {
      this.frames.push({ kind: 'dead', region: 0, height: 0, params: 0, results: [], branched: false });
      return;
    }
    const thenEndReachable = this.reachable;
    if (f.reach === 'both') {
      if (thenEndReachable) {
        this.copyBranchValues(f, f.region);
        f.branched = true;
        this.emit('other'); // branch to the end: charged to the enclosing region
      }
      this.resetLast();
    }
    if (f.reach === 'then') {
      // the else arm is dead, but wasmi still emits its ConsumeFuel, which `then` falls into
      f.region = this.newRegion();
      this.beforeAt.set(index, f.region);
    } else f.region = this.newRegion(index);
    f.kind = 'else';
    f.thenEndReachable = thenEndReachable;
    this.reachable = f.reach !== 'then';
    // wasmi `push_else_operands`: only an if with both arms live restarts from its params
    if (f.reach === 'both') this.stack = (f.elseStack ?? []).slice();
    this.frames.push(f);
  }

  private end(index: number): void {
    const f = this.frames.pop();
    if (!f) return;
    switch (f.kind) {
      case 'dead':
        this.resetLast();
        return;
      case 'loop':
        return;
      case 'func':
      case 'block': {
        if (f.branched) {
          if (this.reachable) this.copyBranchValues(f, f.region);
          this.pushFrameResults(f);
        }
        this.reachable ||= f.branched;
        if (this.reachable && f.kind === 'func') this.encodeReturn(f.region);
        if (f.branched) this.resetLast();
        return;
      }
      case 'if': {
        if (f.reach === 'both') {
          if (this.reachable && f.results.length > 0) {
            this.copyBranchValues(f, f.region);
            this.emit('other', f.region);
          }
          this.stack = (f.elseStack ?? []).slice();
          if (f.results.length > 0) {
            // an `if` with results and no `else`: wasmi adds an else region copying the params
            const region = this.newRegion();
            this.implicitElseAt.set(index, region);
            this.copyBranchValues(f, region);
          }
          this.pushFrameResults(f);
          this.reachable = true;
          this.resetLast();
          return;
        }
        const endReachable = f.reach === 'then' ? this.reachable : true;
        if (f.reach === 'else') this.stack = (f.elseStack ?? []).slice();
        return this.endOneArm(f, endReachable);
      }
      case 'else': {
        if (f.reach === 'both') {
          const elseEnd = this.reachable;
          if (elseEnd) this.copyBranchValues(f, f.region);
          this.pushFrameResults(f);
          this.reachable = f.thenEndReachable || elseEnd ? true : f.branched;
          this.resetLast();
          return;
        }
        const endReachable = f.reach === 'then' ? !!f.thenEndReachable : this.reachable;
        return this.endOneArm(f, endReachable);
      }
    }
  }

  private endOneArm(f: Frame, endReachable: boolean): void {
    // wasmi `translate_end_if_or_else_only`: the live arm's operands stay unless branched to
    if (f.branched) {
      if (endReachable) this.copyBranchValues(f, f.region);
      this.pushFrameResults(f);
    }
    this.reachable = endReachable || f.branched;
    if (f.branched) this.resetLast();
  }
}

/** Fuel model of one defined function (`definedIndex` counts defined functions only). */
export function functionFuel(m: ParsedModule, definedIndex: number, body: DecodedBody): FunctionFuel {
  const typeIndex = m.funcTypeIndices[definedIndex]!;
  const type = m.types[typeIndex] ?? { params: [], results: [] };
  const bodyBytes = m.bodies[definedIndex]!;
  const replay = new FuelReplay(m, type, body);
  const { entry, regions, before, implicitElse } = replay.run(body.instrs);
  return {
    compileFuel: COMPILE_FUEL_PER_BYTE * (bodyBytes.end - bodyBytes.start),
    entryFuel: entry,
    regionFuel: regions,
    beforeFuel: before,
    implicitElseFuel: implicitElse,
  };
}
