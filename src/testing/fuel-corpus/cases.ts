/**
 * Hand-written fuel corpus: one small WASI command module per wasmi 1.1.0 translator rule that
 * decides fuel (issue #34). Each `body` is the text of `_start` (plus `extra` module fields);
 * `wrap` adds the memory export. Expected fuel comes from the wasmi oracle
 * (tools/wasmi-oracle), recorded in vectors/runner-fuel/corpus.json by make-vectors.ts.
 */
export interface WatCase {
  name: string;
  /** Module fields besides `(memory (export "memory") 1)` and `_start`. */
  extra?: string;
  /** Locals and instructions of `_start`. */
  body: string;
  /** Memory declaration, default `1`. */
  memory?: string;
  /** Fuel budget, default 1e9. */
  fuel?: number;
}

export function caseWat(c: WatCase): string {
  // locals first (the helpers below declare theirs where they are used), imports first
  const locals: string[] = [];
  const body = c.body.replace(/\(local (\$[\w.]+ )?(i32|i64|f32|f64)\)/g, (m) => (locals.push(m), ''));
  const lines = (c.extra ?? '').split('\n');
  const imports = lines.filter((l) => l.trim().startsWith('(import'));
  const rest = lines.filter((l) => !l.trim().startsWith('(import'));
  return `(module\n  ${imports.join('\n')}\n  (memory (export "memory") ${c.memory ?? '1'})\n  ${rest.join('\n')}\n  (func (export "_start") ${locals.join(' ')} ${body})\n)`;
}

const loopN = (n: number, inner: string, locals = '') =>
  `(local $i i32) ${locals} (local.set $i (i32.const ${n})) (loop $l ${inner} (local.set $i (i32.sub (local.get $i) (i32.const 1))) (br_if $l (local.get $i)))`;

const sink = '(global $s (mut i32) (i32.const 0)) (global $s64 (mut i64) (i64.const 0))';

const cmpOps = ['eq', 'ne', 'lt_s', 'lt_u', 'gt_s', 'gt_u', 'le_s', 'le_u', 'ge_s', 'ge_u'];

function fusionCases(): WatCase[] {
  const out: WatCase[] = [];
  for (const ty of ['i32', 'i64']) {
    for (const op of cmpOps) {
      out.push({
        name: `br_if-fuse-${ty}.${op}`,
        extra: sink,
        body: loopN(
          7,
          `(block $b (br_if $b (${ty}.${op} (${ty}.extend_placeholder) (${ty}.const 3))) (global.set $s (i32.add (global.get $s) (i32.const 1))))`,
        ),
      });
      out.push({
        name: `if-fuse-${ty}.${op}`,
        extra: sink,
        body: loopN(
          6,
          `(if (${ty}.${op} (${ty}.extend_placeholder) (${ty}.const 2)) (then (global.set $s (i32.add (global.get $s) (i32.const 1)))) (else (global.set $s (i32.sub (global.get $s) (i32.const 1)))))`,
        ),
      });
      out.push({
        name: `select-fuse-${ty}.${op}`,
        extra: sink,
        body: loopN(5, `(global.set $s (select (local.get $i) (i32.const 9) (${ty}.${op} (${ty}.extend_placeholder) (${ty}.const 3))))`),
      });
    }
  }
  for (const c of out)
    c.body = c.body.replaceAll('(i32.extend_placeholder)', '(local.get $i)').replaceAll('(i64.extend_placeholder)', '(i64.extend_i32_u (local.get $i))');
  for (const ty of ['i32', 'i64']) {
    const v = ty === 'i32' ? '(local.get $i)' : '(i64.extend_i32_u (local.get $i))';
    out.push({ name: `br_if-eqz-${ty}`, extra: sink, body: loopN(5, `(block $b (br_if $b (${ty}.eqz ${v})) (global.set $s (local.get $i)))`) });
    out.push({ name: `br_if-eqz-eqz-${ty}`, extra: sink, body: loopN(5, `(block $b (br_if $b (i32.eqz (${ty}.eqz ${v}))) (global.set $s (local.get $i)))`) });
    out.push({
      name: `br_if-eq-zero-of-cmp-${ty}`,
      extra: sink,
      body: loopN(5, `(block $b (br_if $b (i32.eq (${ty}.lt_u ${v} (${ty}.const 3)) (i32.const 0))) (global.set $s (local.get $i)))`),
    });
    out.push({
      name: `br_if-and-${ty}`,
      extra: sink,
      body: loopN(5, `(block $b (br_if $b (${ty}.ne (${ty}.and ${v} (${ty}.const 1)) (${ty}.const 0))) (global.set $s (local.get $i)))`),
    });
  }
  for (const [ty, c] of [
    ['f32', '(f32.convert_i32_u (local.get $i))'],
    ['f64', '(f64.convert_i32_u (local.get $i))'],
  ]) {
    for (const op of ['eq', 'ne', 'lt', 'gt', 'le', 'ge']) {
      out.push({
        name: `br_if-fuse-${ty}.${op}`,
        extra: sink,
        body: loopN(5, `(block $b (br_if $b (${ty}.${op} ${c} (${ty}.const 2.5))) (global.set $s (i32.add (global.get $s) (i32.const 1))))`),
      });
    }
  }
  return out;
}

function localSetCases(): WatCase[] {
  const producers: Record<string, string> = {
    add: '(i32.add (local.get $a) (local.get $b))',
    'add-imm': '(i32.add (local.get $a) (i32.const 5))',
    'imm-sub': '(i32.sub (i32.const 5) (local.get $a))',
    mul: '(i32.mul (local.get $a) (local.get $b))',
    cmp: '(i32.lt_u (local.get $a) (local.get $b))',
    eqz: '(i32.eqz (local.get $a))',
    load: '(i32.load (local.get $a))',
    'load-offset': '(i32.load offset=8 (local.get $a))',
    'load8-imm-addr': '(i32.load8_u (i32.const 100))',
    global: '(global.get $s)',
    const: '(i32.const 77)',
    'const-big': '(i32.const 0x7fffffff)',
    local: '(local.get $b)',
    select: '(select (local.get $a) (local.get $b) (local.get $c))',
    call: '(call $id (local.get $a))',
    'memory.size': '(memory.size)',
    clz: '(i32.clz (local.get $a))',
    wrap: '(i32.wrap_i64 (local.get $w))',
    'tee-chain': '(local.tee $b (i32.add (local.get $a) (i32.const 1)))',
    'add-self': '(i32.add (local.get $d) (i32.const 1))',
    'shl-imm': '(i32.shl (local.get $a) (i32.const 3))',
    'div-imm': '(i32.div_u (local.get $a) (i32.const 3))',
    'rem-s-imm': '(i32.rem_s (local.get $a) (i32.const 7))',
    'block-result': '(block (result i32) (local.get $a))',
    'if-result': '(if (result i32) (local.get $c) (then (local.get $a)) (else (local.get $b)))',
  };
  const out: WatCase[] = [];
  const extra = `${sink} (func $id (param i32) (result i32) (local.get 0))`;
  const locals = '(local $a i32) (local $b i32) (local $c i32) (local $d i32) (local $w i64)';
  const init = '(local.set $a (i32.const 12)) (local.set $b (i32.const 30)) (local.set $c (i32.const 1)) (local.set $w (i64.const 99))';
  for (const [name, p] of Object.entries(producers)) {
    out.push({ name: `local.set-after-${name}`, extra, body: `${locals} ${init} ${loopN(4, `(local.set $d ${p}) (global.set $s (local.get $d))`)}` });
    out.push({ name: `local.tee-after-${name}`, extra, body: `${locals} ${init} ${loopN(4, `(global.set $s (i32.add (local.tee $d ${p}) (local.get $d)))`)}` });
  }
  out.push({
    name: 'local.set-overwrites-stacked-local',
    extra,
    body: `${locals} ${init} ${loopN(3, '(local.get $a) (local.set $a (i32.const 4)) (global.set $s (i32.add (local.get $a)))')}`,
  });
  out.push({
    name: 'local.set-same-local',
    extra,
    body: `${locals} ${init} ${loopN(3, '(local.set $a (local.get $a)) (global.set $s (local.get $a))')}`,
  });
  out.push({
    name: 'local.set-i64-big-const',
    extra,
    body: `${locals} ${init} ${loopN(3, '(local.set $w (i64.const 0x123456789abc)) (global.set $s64 (local.get $w))')}`,
  });
  out.push({
    name: 'local.set-f64-consts',
    extra,
    body: `(local $f f64) (local $g f32) ${loopN(3, '(local.set $f (f64.const 0.1)) (local.set $f (f64.const 0.5)) (local.set $g (f32.const 0.1)) (local.set $f (f64.add (local.get $f) (f64.convert_i32_s (local.get $i))))')}`,
  });
  return out;
}

function controlCases(): WatCase[] {
  const out: WatCase[] = [];
  out.push({
    name: 'nested-blocks-early-exit',
    extra: `${sink}
  (func $f (param $x i32) (result i32)
    (block $a (block $b (block $c
      (br_if $a (i32.eq (local.get $x) (i32.const 0)))
      (br_if $b (i32.eq (local.get $x) (i32.const 1)))
      (br_if $c (i32.eq (local.get $x) (i32.const 2)))
      (return (i32.mul (local.get $x) (i32.const 7))))
      (return (i32.const 10)))
      (return (i32.const 20)))
    (i32.const 30))`,
    body: loopN(6, '(global.set $s (i32.add (global.get $s) (call $f (local.get $i))))'),
  });
  for (const n of [1, 2, 3, 5, 9]) {
    const targets = Array.from({ length: n }, (_, k) => `$b${k % 3}`).join(' ');
    out.push({
      name: `br_table-${n}`,
      extra: sink,
      body: loopN(
        8,
        `(block $b2 (block $b1 (block $b0 (br_table ${targets} $b2 (i32.rem_u (local.get $i) (i32.const 4)))) (global.set $s (i32.const 1))) (global.set $s (i32.const 2)))`,
      ),
    });
  }
  out.push({
    name: 'br_table-with-value',
    extra: sink,
    body: loopN(
      6,
      '(global.set $s (block $o (result i32) (block $x (result i32) (br_table $x $o $x (local.get $i) (i32.rem_u (local.get $i) (i32.const 3)))) (i32.const 5) (i32.add)))',
    ),
  });
  out.push({
    name: 'br_table-const-index',
    extra: sink,
    body: loopN(3, '(block $b1 (block $b0 (br_table $b0 $b1 (i32.const 1))) (global.set $s (i32.const 3)))'),
  });
  out.push({
    name: 'if-const-true',
    extra: sink,
    body: loopN(3, '(if (i32.const 1) (then (global.set $s (i32.const 1))) (else (global.set $s (i32.const 2))))'),
  });
  out.push({
    name: 'if-const-false',
    extra: sink,
    body: loopN(3, '(if (i32.const 0) (then (global.set $s (i32.const 1))) (else (global.set $s (i32.const 2))))'),
  });
  out.push({ name: 'if-no-else', extra: sink, body: loopN(5, '(if (i32.and (local.get $i) (i32.const 1)) (then (global.set $s (local.get $i))))') });
  out.push({
    name: 'if-result-both',
    extra: sink,
    body: loopN(
      5,
      '(global.set $s (if (result i32) (i32.and (local.get $i) (i32.const 1)) (then (i32.add (local.get $i) (i32.const 1))) (else (i32.const 7))))',
    ),
  });
  out.push({
    name: 'if-multi-value-no-else',
    extra: `${sink} (type $p (func (param i32 i32) (result i32 i32)))`,
    body: loopN(4, '(local.get $i) (i32.const 3) (if (type $p) (i32.and (local.get $i) (i32.const 1)) (then (drop) (i32.const 9))) (i32.add) (global.set $s)'),
  });
  out.push({
    name: 'if-then-branches-out',
    extra: sink,
    body: loopN(5, '(block $o (if (i32.gt_u (local.get $i) (i32.const 2)) (then (br $o)) (else (global.set $s (i32.const 1)))) (global.set $s (i32.const 2)))'),
  });
  out.push({
    name: 'block-result-copy-at-end',
    extra: sink,
    body: `(local $a i32) ${loopN(5, '(global.set $s (block (result i32) (local.set $a (i32.add (local.get $i) (i32.const 2))) (drop (br_if 0 (local.get $a) (i32.and (local.get $i) (i32.const 1)))) (drop (i32.const 0)) (local.get $i)))')}`,
  });
  out.push({
    name: 'block-two-results',
    extra: `${sink} (type $r2 (func (result i32 i32)))`,
    body: loopN(
      4,
      '(block (type $r2) (local.get $i) (i32.const 3) (br_if 0 (local.get $i) (i32.const 5) (i32.and (local.get $i) (i32.const 1))) (drop) (drop)) (i32.add) (global.set $s)',
    ),
  });
  out.push({
    name: 'loop-with-params',
    extra: `${sink} (type $lp (func (param i32) (result i32)))`,
    body: '(i32.const 10) (loop $l (type $lp) (i32.sub (i32.const 1)) (local.tee 0) (br_if $l (local.get 0))) (global.set $s) (local i32)',
  });
  out.push({
    name: 'nested-loops',
    extra: sink,
    body: '(local $i i32) (local $j i32) (local.set $i (i32.const 5)) (loop $o (local.set $j (i32.const 4)) (loop $n (global.set $s (i32.add (global.get $s) (i32.mul (local.get $i) (local.get $j)))) (br_if $n (local.tee $j (i32.sub (local.get $j) (i32.const 1))))) (br_if $o (local.tee $i (i32.sub (local.get $i) (i32.const 1)))))',
  });
  out.push({
    name: 'dead-code-after-br',
    extra: sink,
    body: loopN(3, '(block $b (br $b) (global.set $s (i32.const 1)) (drop (i32.add (i32.const 1) (i32.const 2))))'),
  });
  out.push({
    name: 'return-from-loop',
    extra: `${sink} (func $f (param $n i32) (result i32) (loop $l (if (i32.gt_u (local.get $n) (i32.const 100)) (then (return (local.get $n)))) (local.set $n (i32.mul (local.get $n) (i32.const 3))) (br $l)) (unreachable))`,
    body: loopN(4, '(global.set $s (call $f (local.get $i)))'),
  });
  return out;
}

function callCases(): WatCase[] {
  const out: WatCase[] = [];
  for (const n of [0, 1, 2, 4, 7, 8, 9, 16, 17]) {
    const params = Array.from({ length: n }, () => 'i32').join(' ');
    const args = Array.from({ length: n }, (_, k) => (k % 3 === 0 ? '(local.get $i)' : k % 3 === 1 ? `(i32.const ${k})` : '(global.get $s)')).join(' ');
    const sum = n === 0 ? '(i32.const 1)' : Array.from({ length: n }, (_, k) => `(local.get ${k})`).reduce((a, b) => `(i32.add ${a} ${b})`);
    out.push({
      name: `call-${n}-params`,
      extra: `${sink} (func $f ${n ? `(param ${params})` : ''} (result i32) ${sum})`,
      body: loopN(3, `(global.set $s (call $f ${args}))`),
    });
  }
  for (const n of [2, 3, 5, 9]) {
    const results = Array.from({ length: n }, () => 'i32').join(' ');
    const vals = Array.from({ length: n }, (_, k) => `(i32.add (local.get 0) (i32.const ${k}))`).join(' ');
    out.push({
      name: `call-${n}-results`,
      extra: `${sink} (func $f (param i32) (result ${results}) ${vals})`,
      body: loopN(3, `(call $f (local.get $i)) ${'(i32.add) '.repeat(n - 1)} (global.set $s)`),
    });
  }
  out.push({
    name: 'call-indirect',
    extra: `${sink} (type $t (func (param i32) (result i32))) (table 3 funcref) (elem (i32.const 0) $a $b $c)
  (func $a (param i32) (result i32) (i32.add (local.get 0) (i32.const 1)))
  (func $b (param i32) (result i32) (i32.mul (local.get 0) (i32.const 2)))
  (func $c (param i32) (result i32) (i32.sub (local.get 0) (i32.const 3)))`,
    body: loopN(6, '(global.set $s (call_indirect (type $t) (local.get $i) (i32.rem_u (local.get $i) (i32.const 3))))'),
  });
  out.push({
    name: 'call-indirect-trap-null',
    extra: `(type $t (func (param i32) (result i32))) (table 3 funcref) (elem (i32.const 0) $a) (func $a (param i32) (result i32) (local.get 0))`,
    body: '(drop (call_indirect (type $t) (i32.const 1) (i32.const 0))) (drop (call_indirect (type $t) (i32.const 1) (i32.const 2)))',
  });
  out.push({
    name: 'return-call',
    extra: `${sink}
  (func $count (param $n i32) (param $acc i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n)) (then (local.get $acc))
      (else (return_call $count (i32.sub (local.get $n) (i32.const 1)) (i32.add (local.get $acc) (local.get $n))))))`,
    body: '(global.set $s (call $count (i32.const 50) (i32.const 0)))',
  });
  out.push({
    name: 'return-call-indirect',
    extra: `${sink} (type $t (func (param i32) (result i32))) (table 2 funcref) (elem (i32.const 0) $down $done)
  (func $done (param i32) (result i32) (local.get 0))
  (func $down (param $n i32) (result i32) (return_call_indirect (type $t) (i32.sub (local.get $n) (i32.const 1)) (i32.lt_u (local.get $n) (i32.const 2))))`,
    body: '(global.set $s (call $down (i32.const 20)))',
  });
  out.push({
    name: 'recursion-depth-998',
    extra: '(func $r (param i32) (if (local.get 0) (then (call $r (i32.sub (local.get 0) (i32.const 1))))))',
    body: '(call $r (i32.const 998))',
  });
  out.push({
    name: 'recursion-depth-999-traps',
    extra: '(func $r (param i32) (if (local.get 0) (then (call $r (i32.sub (local.get 0) (i32.const 1))))))',
    body: '(call $r (i32.const 999))',
  });
  return out;
}

function memoryCases(): WatCase[] {
  const out: WatCase[] = [];
  for (const len of [0, 1, 63, 64, 65, 127, 128, 1000, 65536]) {
    out.push({ name: `memory.fill-${len}`, body: `(memory.fill (i32.const 16) (i32.const 7) (i32.const ${len}))`, memory: '2' });
    out.push({ name: `memory.copy-${len}`, body: `(memory.copy (i32.const 70000) (i32.const 3) (i32.const ${len}))`, memory: '3' });
  }
  out.push({
    name: 'memory.fill-dynamic-len',
    extra: '(global $n (mut i32) (i32.const 300))',
    body: loopN(4, '(memory.fill (local.get $i) (i32.const 1) (i32.mul (global.get $n) (local.get $i)))'),
  });
  out.push({ name: 'memory.fill-out-of-bounds', body: '(memory.fill (i32.const 65000) (i32.const 1) (i32.const 1000))' });
  out.push({ name: 'memory.copy-out-of-bounds', body: '(memory.copy (i32.const 0) (i32.const 65000) (i32.const 1000))' });
  for (const len of [0, 5, 64, 200]) {
    out.push({
      name: `memory.init-${len}`,
      extra: `(data $d "${'abcdefgh'.repeat(25)}")`,
      body: `(memory.init $d (i32.const 100) (i32.const 0) (i32.const ${len})) (data.drop $d)`,
    });
  }
  for (const [name, memory, delta] of [
    ['memory.grow-1', '1', '1'],
    ['memory.grow-3', '1', '3'],
    ['memory.grow-0', '1', '0'],
    ['memory.grow-fails-max', '1 2', '5'],
    ['memory.grow-dynamic', '1', '(i32.and (memory.size) (i32.const 3))'],
  ] as const) {
    out.push({ name, memory, extra: sink, body: `(global.set $s (memory.grow ${/^\d+$/.test(delta) ? `(i32.const ${delta})` : delta}))` });
  }
  out.push({
    name: 'load-store-mix',
    extra: sink,
    body: loopN(
      8,
      '(i32.store offset=4 (i32.shl (local.get $i) (i32.const 2)) (local.get $i)) (global.set $s (i32.add (global.get $s) (i32.load8_s offset=4 (local.get $i))))',
    ),
  });
  out.push({
    name: 'store-imm-value',
    body: loopN(8, '(i64.store (i32.const 64) (i64.const 0x1122334455)) (i32.store16 (local.get $i) (i32.const 7)) (f64.store (i32.const 8) (f64.const 1.5))'),
  });
  out.push({ name: 'load-out-of-bounds-trap', body: '(drop (i32.load (i32.const 65535)))' });
  return out;
}

function tableCases(): WatCase[] {
  return [
    {
      name: 'table-ops',
      extra: '(table $t 4 20 funcref) (elem declare func $f) (func $f) (global $s (mut i32) (i32.const 0))',
      body: '(table.set $t (i32.const 1) (ref.func $f)) (global.set $s (table.grow $t (ref.null func) (i32.const 3))) (table.fill $t (i32.const 0) (ref.func $f) (i32.const 5)) (global.set $s (table.size $t)) (drop (table.get $t (i32.const 2))) (table.copy $t $t (i32.const 0) (i32.const 2) (i32.const 3))',
    },
    {
      name: 'table-init-elem-drop',
      extra: '(table $t 10 funcref) (elem $e func $f $f $f $f) (func $f)',
      body: '(table.init $t $e (i32.const 1) (i32.const 0) (i32.const 4)) (elem.drop $e)',
    },
  ];
}

function trapCases(): WatCase[] {
  return [
    { name: 'trap-unreachable', body: '(unreachable)' },
    { name: 'trap-after-loop', body: loopN(10, '') + ' (unreachable)' },
    { name: 'trap-div-by-zero', extra: '(global $z (mut i32) (i32.const 0))', body: '(drop (i32.div_s (i32.const 5) (global.get $z)))' },
    { name: 'trap-div-overflow', extra: '(global $m (mut i32) (i32.const -1))', body: '(drop (i32.div_s (i32.const 0x80000000) (global.get $m)))' },
    { name: 'trap-div-const-zero', body: '(drop (i32.div_u (i32.const 5) (i32.const 0)))' },
    { name: 'trap-trunc', extra: '(global $f (mut f64) (f64.const 1e30))', body: '(drop (i32.trunc_f64_s (global.get $f)))' },
    {
      name: 'trap-in-callee',
      extra: '(func $t (param i32) (result i32) (if (local.get 0) (then (unreachable))) (i32.const 1))',
      body: loopN(3, '(drop (call $t (i32.eq (local.get $i) (i32.const 1))))'),
    },
    { name: 'out-of-fuel-loop', body: '(loop $l (br $l))', fuel: 100000 },
    { name: 'out-of-fuel-memory.fill', body: '(memory.fill (i32.const 0) (i32.const 1) (i32.const 65536))', fuel: 600 },
    { name: 'out-of-fuel-memory.grow', body: '(drop (memory.grow (i32.const 4)))', fuel: 2000, memory: '1' },
    { name: 'out-of-fuel-compile', extra: '(func $big (result i32) (i32.add (i32.const 1) (i32.const 2)))', body: '(drop (call $big))', fuel: 70 },
  ];
}

function wasiCases(): WatCase[] {
  const imports = `(import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (data (i32.const 200) "hello fuel\\n")`;
  return [
    {
      name: 'wasi-fd_write-stderr',
      extra: imports,
      body: '(i32.store (i32.const 0) (i32.const 200)) (i32.store (i32.const 4) (i32.const 11)) (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 16)))',
    },
    {
      name: 'wasi-random-branch',
      extra: `${imports} (global $s (mut i32) (i32.const 0))`,
      body: '(drop (call $random_get (i32.const 300) (i32.const 64))) (if (i32.and (i32.load8_u (i32.const 300)) (i32.const 1)) (then (global.set $s (i32.const 1))))',
    },
    {
      name: 'wasi-proc_exit-returns',
      extra: imports,
      body: '(call $proc_exit (i32.const 0)) (unreachable)',
    },
  ];
}

function constFoldCases(): WatCase[] {
  return [
    { name: 'const-fold-arith', extra: sink, body: '(global.set $s (i32.add (i32.mul (i32.const 3) (i32.const 4)) (i32.sub (i32.const 10) (i32.const 2))))' },
    { name: 'const-fold-i64', extra: sink, body: '(global.set $s64 (i64.add (i64.shl (i64.const 1) (i64.const 40)) (i64.const 5)))' },
    {
      name: 'const-global-immutable',
      extra: `${sink} (global $k i32 (i32.const 5))`,
      body: loopN(3, '(global.set $s (i32.add (global.get $k) (local.get $i)))'),
    },
    { name: 'select-same-operands', extra: sink, body: loopN(3, '(global.set $s (select (local.get $i) (local.get $i) (global.get $s)))') },
    { name: 'select-const-cond', extra: sink, body: loopN(3, '(global.set $s (select (local.get $i) (i32.const 4) (i32.const 0)))') },
    { name: 'select-imm-operands', extra: sink, body: loopN(3, '(global.set $s (select (i32.const 1) (i32.const 2) (local.get $i)))') },
    { name: 'select-i64-big-imm', extra: sink, body: loopN(3, '(global.set $s64 (select (i64.const 0x1234567890) (i64.const 2) (local.get $i)))') },
    { name: 'drop-values', extra: sink, body: loopN(3, '(drop (local.get $i)) (drop (i32.const 1)) (drop (i32.add (local.get $i) (i32.const 1)))') },
    {
      name: 'reinterpret-drops-origin-eqz',
      extra: sink,
      body: `(local $a i32) (local $b i32) ${loopN(3, '(global.set $s (i64.eqz (i64.extend_i32_u (i32.ge_s (local.get $a) (local.get $i)))))')}`,
    },
    {
      name: 'reinterpret-keeps-register-local.set',
      extra: sink,
      body: `(local $w i64) ${loopN(3, '(local.set $w (i64.extend_i32_u (i32.add (local.get $i) (i32.const 9)))) (global.set $s64 (local.get $w))')}`,
    },
    {
      name: 'reinterpret-br_if-no-fusion',
      extra: sink,
      body: loopN(4, '(block $b (br_if $b (i32.wrap_i64 (i64.extend_i32_u (i32.lt_u (local.get $i) (i32.const 2))))) (global.set $s (local.get $i)))'),
    },
    { name: 'nop-heavy', body: loopN(3, '(nop) (nop) (nop)') },
    {
      name: 'sign-ext-sat',
      extra: sink,
      body: loopN(3, '(global.set $s (i32.extend8_s (local.get $i))) (global.set $s (i32.trunc_sat_f32_s (f32.const 1e20)))'),
    },
    {
      name: 'float-arith',
      extra: '(global $f (mut f64) (f64.const 1.0))',
      body: loopN(5, '(global.set $f (f64.sqrt (f64.add (global.get $f) (f64.mul (f64.convert_i32_s (local.get $i)) (f64.const 2.5)))))'),
    },
  ];
}

/** All hand-written cases (names unique). */
export function handCases(): WatCase[] {
  return [
    ...fusionCases(),
    ...localSetCases(),
    ...controlCases(),
    ...callCases(),
    ...memoryCases(),
    ...tableCases(),
    ...trapCases(),
    ...wasiCases(),
    ...constFoldCases(),
  ];
}
