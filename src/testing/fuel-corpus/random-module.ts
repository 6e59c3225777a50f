/**
 * Seeded generator of small valid wasm modules (WAT text) for the fuel corpus and the oracle
 * fuzz target: a few functions calling only lower-numbered ones (so every run ends), bounded
 * loops, nested blocks with `br_if`/`br_table`, `if`/`else`, `select`, locals, globals, loads
 * and stores, bulk memory, `memory.grow`, calls (direct, indirect, tail) with several
 * parameters and results, and occasional traps.
 */
type Ty = 'i32' | 'i64' | 'f32' | 'f64';
type FTy = 'f32' | 'f64';

/** Extra features, off for the committed corpus (its seeds must keep producing the same modules). */
export interface GenOptions {
  /** f32/f64 locals, globals, arithmetic, compares, conversions; multi-value blocks. */
  extended?: boolean;
}

class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 1;
  }
  next(): number {
    // xorshift32
    let x = this.s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x >>> 0;
    return this.s;
  }
  int(n: number): number {
    return this.next() % n;
  }
  chance(p: number): boolean {
    return this.next() / 0x100000000 < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

interface Fn {
  name: string;
  params: Ty[];
  results: Ty[];
}

const BIN: Record<'i32' | 'i64', string[]> = {
  i32: ['add', 'sub', 'mul', 'and', 'or', 'xor', 'shl', 'shr_u', 'shr_s', 'rotl', 'rotr', 'div_u', 'rem_u', 'div_s', 'rem_s'],
  i64: ['add', 'sub', 'mul', 'and', 'or', 'xor', 'shl', 'shr_u', 'shr_s', 'rotl', 'div_u', 'rem_s'],
};
const CMP = ['eq', 'ne', 'lt_s', 'lt_u', 'gt_s', 'gt_u', 'le_s', 'le_u', 'ge_s', 'ge_u'];
const FBIN = ['add', 'sub', 'mul', 'div', 'min', 'max', 'copysign'];
const FUN = ['abs', 'neg', 'ceil', 'floor', 'trunc', 'nearest', 'sqrt'];
const FCMP = ['eq', 'ne', 'lt', 'gt', 'le', 'ge'];
const UN: Record<'i32' | 'i64', string[]> = { i32: ['clz', 'ctz', 'popcnt', 'extend8_s', 'extend16_s'], i64: ['clz', 'ctz', 'popcnt', 'extend32_s'] };

class Gen {
  private locals: Ty[] = [];
  private nParams = 0;
  private counters: number[] = [];
  private labels: { name: string; results: Ty[] }[] = [];
  private fnResults: Ty[] = [];
  private size = 0;
  private labelId = 0;

  constructor(
    private readonly r: Rng,
    private readonly fns: Fn[],
    private readonly trapRate: number,
    private readonly extended = false,
  ) {}

  private fconst(ty: FTy): string {
    return `(${ty}.const ${this.r.pick(['0', '-0', '1.5', '-2.25', '1e10', '3.0e-5', '100', '0.1', '-7', '65536.5'])})`;
  }

  private fexpr(ty: FTy, d: number): string {
    const r = this.r;
    this.size++;
    if (d <= 0 || this.size > 400 || r.chance(0.3)) {
      const l = this.localOf(ty);
      if (l !== undefined && r.chance(0.6)) return `(local.get ${l})`;
      if (r.chance(0.15)) return `(global.get $g${ty})`;
      return this.fconst(ty);
    }
    const other: FTy = ty === 'f32' ? 'f64' : 'f32';
    switch (r.int(8)) {
      case 0:
      case 1:
        return `(${ty}.${r.pick(FBIN)} ${this.fexpr(ty, d - 1)} ${this.fexpr(ty, d - 1)})`;
      case 2:
        return `(${ty}.${r.pick(FUN)} ${this.fexpr(ty, d - 1)})`;
      case 3:
        return `(select ${this.fexpr(ty, d - 1)} ${this.fexpr(ty, d - 1)} ${this.expr('i32', d - 1)})`;
      case 4:
        return `(${ty}.load offset=${r.pick([0, 8])} ${this.addr()})`;
      case 5: {
        const it = r.pick<'i32' | 'i64'>(['i32', 'i64']);
        return `(${ty}.convert_${it}_${r.pick(['s', 'u'])} ${this.expr(it, d - 1)})`;
      }
      case 6:
        return `(${ty}.${ty === 'f32' ? 'demote_f64' : 'promote_f32'} ${this.fexpr(other, d - 1)})`;
      default: {
        const f = this.fns.filter((f) => f.results.length === 1 && f.results[0] === ty);
        if (!f.length) return this.fconst(ty);
        const fn = r.pick(f);
        return `(call ${fn.name} ${fn.params.map((p) => this.expr(p, d - 1)).join(' ')})`;
      }
    }
  }

  /** An i32/i64 computed from floats (compares, saturating truncations). */
  private fromFloat(ty: 'i32' | 'i64', d: number): string {
    const r = this.r;
    const ft = r.pick<FTy>(['f32', 'f64']);
    if (ty === 'i32' && r.chance(0.6)) return `(${ft}.${r.pick(FCMP)} ${this.fexpr(ft, d - 1)} ${this.fexpr(ft, d - 1)})`;
    return `(${ty}.trunc_sat_${ft}_${r.pick(['s', 'u'])} ${this.fexpr(ft, d - 1)})`;
  }

  /** A block with two results, branched out of with both values, its results consumed by global stores. */
  private multiValueBlock(d: number): string {
    const r = this.r;
    const t1 = r.pick<Ty>(['i32', 'i64', 'f64']);
    const t2 = r.pick<Ty>(['i32', 'i64', 'f32']);
    const name = `$b${this.labelId++}`;
    this.labels.push({ name, results: [t1, t2] });
    const body = `${this.stmts(d - 1, 2)} (br_if ${name} ${this.expr(t1, d - 1)} ${this.expr(t2, d - 1)} ${this.expr('i32', d - 1)}) (drop) (drop) ${this.stmts(d - 1, 1)} ${this.expr(t1, d - 1)} ${this.expr(t2, d - 1)}`;
    this.labels.pop();
    return `(block ${name} (result ${t1} ${t2}) ${body}) (global.set $g${t2}) (global.set $g${t1})`;
  }

  private constOf(ty: Ty): string {
    const r = this.r;
    const small = r.pick([0, 1, 2, 3, -1, 7, 8, 100, 255]);
    if (ty === 'i32') return `(i32.const ${r.chance(0.7) ? small : (r.next() | 0).toString()})`;
    const big = r.chance(0.3) ? `0x${r.next().toString(16)}${r.next().toString(16).padStart(8, '0')}` : String(small);
    return `(i64.const ${big})`;
  }

  private localOf(ty: Ty): number | undefined {
    const c = this.locals.map((t, i) => (t === ty && !this.counters.includes(i) ? i : -1)).filter((i) => i >= 0);
    return c.length ? this.r.pick(c) : undefined;
  }

  private addr(): string {
    return `(i32.and ${this.expr('i32', 1)} (i32.const 0x3ff8))`;
  }

  expr(ty: Ty, d: number): string {
    if (ty === 'f32' || ty === 'f64') return this.fexpr(ty, d);
    const r = this.r;
    if (this.extended && d > 0 && r.chance(0.12)) return this.fromFloat(ty, d);
    this.size++;
    if (d <= 0 || this.size > 400 || r.chance(0.25)) {
      const l = this.localOf(ty);
      if (l !== undefined && r.chance(0.6)) return `(local.get ${l})`;
      if (r.chance(0.15)) return `(global.get $g${ty})`;
      if (r.chance(0.1) && ty === 'i32') return '(global.get $k)';
      return this.constOf(ty);
    }
    const k = r.int(16);
    switch (k) {
      case 0:
      case 1:
      case 2: {
        let op = r.pick(BIN[ty]);
        if (op.startsWith('div') || op.startsWith('rem')) {
          if (!r.chance(this.trapRate * 4)) return `(${ty}.${op} ${this.expr(ty, d - 1)} (${ty}.or ${this.expr(ty, d - 1)} (${ty}.const 1)))`;
          op = r.pick(['div_u', 'rem_s']);
        }
        return `(${ty}.${op} ${this.expr(ty, d - 1)} ${this.expr(ty, d - 1)})`;
      }
      case 3:
        if (ty === 'i32') {
          const t = r.pick<Ty>(['i32', 'i64']);
          return `(${t}.${r.pick(CMP)} ${this.expr(t, d - 1)} ${this.expr(t, d - 1)})`;
        }
        return `(i64.extend_i32_${r.pick(['s', 'u'])} ${this.expr('i32', d - 1)})`;
      case 4: {
        if (ty === 'i64') return `(i64.${r.pick(UN.i64)} ${this.expr('i64', d - 1)})`;
        const t = r.pick<Ty>(['i32', 'i64']);
        return `(${t}.eqz ${this.expr(t, d - 1)})`;
      }
      case 5:
        return `(${ty}.${r.pick(UN[ty])} ${this.expr(ty, d - 1)})`;
      case 6:
        return `(select ${this.expr(ty, d - 1)} ${this.expr(ty, d - 1)} ${this.expr('i32', d - 1)})`;
      case 7: {
        const loads = ty === 'i32' ? ['i32.load', 'i32.load8_u', 'i32.load16_s', 'i32.load8_s'] : ['i64.load', 'i64.load32_u', 'i64.load8_s'];
        return `(${r.pick(loads)} offset=${r.pick([0, 4, 16])} ${this.addr()})`;
      }
      case 8: {
        const f = this.fns.filter((f) => f.results.length === 1 && f.results[0] === ty);
        if (!f.length) return this.constOf(ty);
        const fn = r.pick(f);
        return `(call ${fn.name} ${fn.params.map((p) => this.expr(p, d - 1)).join(' ')})`;
      }
      case 9: {
        const l = this.localOf(ty);
        return l === undefined ? this.constOf(ty) : `(local.tee ${l} ${this.expr(ty, d - 1)})`;
      }
      case 10: {
        const name = `$b${this.labelId++}`;
        this.labels.push({ name, results: [ty] });
        const body = `${this.stmts(d - 1, 2)} (drop (br_if ${name} ${this.expr(ty, d - 1)} ${this.expr('i32', d - 1)})) ${this.stmts(d - 1, 1)} ${this.expr(ty, d - 1)}`;
        this.labels.pop();
        return `(block ${name} (result ${ty}) ${body})`;
      }
      case 11: {
        const name = `$b${this.labelId++}`;
        this.labels.push({ name, results: [ty] });
        const t = `${this.stmts(d - 1, 1)} ${this.expr(ty, d - 1)}`;
        const e = `${this.stmts(d - 1, 1)} ${this.expr(ty, d - 1)}`;
        this.labels.pop();
        return `(if ${name} (result ${ty}) ${this.expr('i32', d - 1)} (then ${t}) (else ${e}))`;
      }
      case 12:
        return ty === 'i32'
          ? `(i32.wrap_i64 ${this.expr('i64', d - 1)})`
          : `(i64.${r.pick(BIN.i64.slice(0, 6))} ${this.expr('i64', d - 1)} ${this.constOf('i64')})`;
      case 13:
        return ty === 'i32'
          ? r.chance(0.5)
            ? '(memory.size)'
            : `(memory.grow ${r.pick(['(i32.const 0)', '(i32.const 1)', `(i32.and ${this.expr('i32', 0)} (i32.const 1))`])})`
          : this.constOf(ty);
      case 14:
        if (
          ty === 'i32' &&
          this.fns.some((f) => f.params.length === 1 && f.params[0] === 'i32' && f.results.length === 1 && f.results[0] === 'i32' && f.name.startsWith('$t'))
        )
          return `(call_indirect (type $ti) ${this.expr('i32', d - 1)} (i32.rem_u ${this.expr('i32', d - 1)} (i32.const ${this.fns.filter((f) => f.name.startsWith('$t')).length + (r.chance(this.trapRate) ? 1 : 0)})))`;
        return this.constOf(ty);
      default: {
        const l = this.localOf(ty);
        return l === undefined ? this.constOf(ty) : `(${ty}.add (local.get ${l}) ${this.constOf(ty)})`;
      }
    }
  }

  stmt(d: number): string {
    const r = this.r;
    this.size++;
    const ty = this.extended ? r.pick<Ty>(['i32', 'i32', 'i64', 'f32', 'f64']) : r.pick<Ty>(['i32', 'i32', 'i64']);
    if (this.extended && d > 0 && this.size <= 400 && r.chance(0.08)) return this.multiValueBlock(d);
    if (d <= 0 || this.size > 400) {
      const l = this.localOf(ty);
      return l === undefined ? `(global.set $g${ty} ${this.expr(ty, 0)})` : `(local.set ${l} ${this.expr(ty, 1)})`;
    }
    const k = r.int(17);
    switch (k) {
      case 0:
      case 1:
      case 2: {
        const l = this.localOf(ty);
        return l === undefined ? `(global.set $g${ty} ${this.expr(ty, d)})` : `(local.set ${l} ${this.expr(ty, d)})`;
      }
      case 3:
        return `(global.set $g${ty} ${this.expr(ty, d)})`;
      case 4: {
        const stores = ty === 'i32' ? ['i32.store', 'i32.store8', 'i32.store16'] : ty === 'i64' ? ['i64.store', 'i64.store32', 'i64.store8'] : [`${ty}.store`];
        return `(${r.pick(stores)} offset=${r.pick([0, 8])} ${this.addr()} ${this.expr(ty, d - 1)})`;
      }
      case 5:
        return `(drop ${this.expr(ty, d)})`;
      case 6:
        return `(if ${this.expr('i32', d - 1)} (then ${this.stmts(d - 1, 2)})${r.chance(0.5) ? ` (else ${this.stmts(d - 1, 2)})` : ''})`;
      case 7: {
        const name = `$b${this.labelId++}`;
        this.labels.push({ name, results: [] });
        const s = `(block ${name} ${this.stmts(d - 1, 3)})`;
        this.labels.pop();
        return s;
      }
      case 8: {
        const blocks = this.labels.filter((l) => l.results.length === 0);
        if (!blocks.length) return this.stmt(d - 1);
        return `(br_if ${r.pick(blocks).name} ${this.expr('i32', d - 1)})`;
      }
      case 9: {
        const c = this.locals.length;
        this.locals.push('i32');
        this.counters.push(c);
        const name = `$l${this.labelId++}`;
        const n = 1 + r.int(6);
        const body = this.stmts(d - 1, 3);
        this.counters.pop();
        return `(local.set ${c} (i32.const ${n})) (loop ${name} ${body} (br_if ${name} (local.tee ${c} (i32.sub (local.get ${c}) (i32.const 1)))))`;
      }
      case 10: {
        const n = 1 + r.int(4);
        const names = Array.from({ length: n }, () => `$b${this.labelId++}`);
        let inner = `(br_table ${Array.from({ length: 1 + r.int(5) }, () => r.pick(names)).join(' ')} ${r.pick(names)} ${this.expr('i32', d - 1)})`;
        for (const nm of names) inner = `(block ${nm} ${inner}) ${this.stmt(d - 1)}`;
        return inner;
      }
      case 11: {
        const f = r.chance(0.5) ? this.fns.filter((f) => f.results.length !== 1) : this.fns;
        if (!f.length) return this.stmt(d - 1);
        const fn = r.pick(f);
        return `(call ${fn.name} ${fn.params.map((p) => this.expr(p, d - 1)).join(' ')})${' (drop)'.repeat(fn.results.length)}`;
      }
      case 12: {
        const len = r.pick(['(i32.const 0)', '(i32.const 17)', '(i32.const 64)', '(i32.const 200)', `(i32.and ${this.expr('i32', 1)} (i32.const 0x1ff))`]);
        return r.chance(0.5) ? `(memory.fill ${this.addr()} ${this.expr('i32', 1)} ${len})` : `(memory.copy ${this.addr()} ${this.addr()} ${len})`;
      }
      case 13:
        if (r.chance(this.trapRate)) return `(if ${this.expr('i32', 1)} (then (unreachable)))`;
        return '(nop)';
      case 14: {
        // early return (with values of the function's results)
        if (!r.chance(0.3)) return this.stmt(d - 1);
        return `(if ${this.expr('i32', d - 1)} (then (return ${this.fnResults.map((t) => this.expr(t, 1)).join(' ')})))`;
      }
      case 15: {
        const tail = this.fns.filter((f) => f.results.length === this.fnResults.length && f.results.every((t, i) => t === this.fnResults[i]));
        if (!tail.length || !r.chance(0.4)) return this.stmt(d - 1);
        const fn = r.pick(tail);
        return `(if ${this.expr('i32', d - 1)} (then (return_call ${fn.name} ${fn.params.map((p) => this.expr(p, 1)).join(' ')})))`;
      }
      default: {
        const l = this.localOf('i32');
        if (l === undefined) return this.stmt(d - 1);
        return `(local.set ${l} (i32.add (local.get ${l}) (i32.const 1)))`;
      }
    }
  }

  stmts(d: number, max: number): string {
    const n = this.r.int(max + 1);
    return Array.from({ length: n }, () => this.stmt(d)).join(' ');
  }

  func(fn: Fn, extraLocals: Ty[]): string {
    this.locals = [...fn.params, ...extraLocals];
    this.nParams = fn.params.length;
    this.counters = [];
    this.labels = [];
    this.fnResults = fn.results;
    this.size = 0;
    const body = `${this.stmts(3, 5)} ${fn.results.map((t) => this.expr(t, 3)).join(' ')}`;
    const locals = this.locals.slice(this.nParams);
    const sig = `${fn.params.length ? `(param ${fn.params.join(' ')})` : ''} ${fn.results.length ? `(result ${fn.results.join(' ')})` : ''}`;
    return `(func ${fn.name} ${fn.name === '$start' ? '(export "_start")' : ''} ${sig} ${locals.length ? `(local ${locals.join(' ')})` : ''} ${body})`;
  }
}

/** One module, deterministic in `seed`. */
export function randomModuleWat(seed: number, opts: GenOptions = {}): string {
  const r = new Rng(seed * 2654435761 + 12345);
  const ext = opts.extended === true;
  const trapRate = r.chance(0.3) ? 0.05 : 0;
  const fns: Fn[] = [];
  const parts: string[] = [];
  const tys = (n: number): Ty[] => Array.from({ length: n }, () => (ext ? r.pick<Ty>(['i32', 'i32', 'i64', 'f32', 'f64']) : r.pick<Ty>(['i32', 'i32', 'i64'])));
  const nTable = r.int(3);
  for (let k = 0; k < nTable; k++) {
    const fn: Fn = { name: `$t${k}`, params: ['i32'], results: ['i32'] };
    const g = new Gen(r, fns.slice(), trapRate, ext);
    parts.push(g.func(fn, tys(r.int(3))));
    fns.push(fn);
  }
  const nFns = 1 + r.int(4);
  for (let k = 0; k < nFns; k++) {
    const fn: Fn = { name: `$f${k}`, params: tys(r.chance(0.2) ? 5 + r.int(6) : r.int(4)), results: tys(r.chance(0.15) ? 2 + r.int(2) : r.int(2)) };
    const g = new Gen(r, fns.slice(), trapRate, ext);
    parts.push(g.func(fn, tys(r.int(4))));
    fns.push(fn);
  }
  const start = new Gen(r, fns.slice(), trapRate, ext).func({ name: '$start', params: [], results: [] }, tys(1 + r.int(3)));
  const table = nTable
    ? `(table ${nTable + 1} funcref) (elem (i32.const 0) ${fns
        .filter((f) => f.name.startsWith('$t'))
        .map((f) => f.name)
        .join(' ')})`
    : '';
  return `(module
  (type $ti (func (param i32) (result i32)))
  (memory (export "memory") 1 ${r.chance(0.3) ? 2 : 4})
  (global $gi32 (mut i32) (i32.const ${r.int(1000)}))
  (global $gi64 (mut i64) (i64.const ${r.int(1000)}))
  (global $k i32 (i32.const ${r.int(50)}))
  ${ext ? '(global $gf32 (mut f32) (f32.const 1.5)) (global $gf64 (mut f64) (f64.const -2.5))' : ''}
  ${table}
  ${parts.join('\n  ')}
  ${start}
)`;
}
