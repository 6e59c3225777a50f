/**
 * A toad-token-sized app for the benchmarks: the template app (21 KiB) with filler functions added
 * until the binary is `bytes` long. The functions are real code (loops, memory loads and stores,
 * calls), so validation, metering instrumentation and compilation do the work a large Rust app
 * costs them; nothing calls them, so the contract's behaviour is the template's.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import wabtInit from 'wabt';
import { templateApp } from '../testing/fixtures.js';
import { sha256 } from '../util/sha256.js';
import { toHex } from '../util/bytes.js';

const filler = (i: number): string => `
  (func $filler${i} (param $p i32) (param $n i32) (result i32)
    (local $acc i32) (local $k i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $n)))
        (local.set $acc (i32.add (local.get $acc)
          (i32.xor (i32.load offset=${(i % 64) * 4} (i32.add (local.get $p) (i32.shl (local.get $k) (i32.const 2))))
                   (i32.mul (local.get $k) (i32.const ${((i * 2654435761) >>> 0) | 1})))))
        (i32.store offset=${(i % 32) * 8} (local.get $p) (i32.rotl (local.get $acc) (i32.const ${i % 31})))
        (if (i32.and (local.get $acc) (i32.const ${1 << (i % 16)}))
          (then (local.set $acc (i32.sub (local.get $acc) (i32.load8_u (local.get $p)))))
          (else (local.set $acc (i32.or (local.get $acc) (i32.const ${i})))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next)))
    ${i > 0 ? `(i32.add (local.get $acc) (call $filler${i - 1} (local.get $p) (i32.shr_u (local.get $n) (i32.const 1))))` : '(local.get $acc)'})`;

/** The template app padded with filler functions to at least `bytes` (default 330 000: toad-token's preparation cost). */
export async function bigTemplateApp(bytes = 330_000): Promise<{ wasm: Uint8Array; vk: string; path: string }> {
  const base = await templateApp();
  const wabt = await wabtInit();
  const features = { bulk_memory: true, sign_extension: true, sat_float_to_int: true, mutable_globals: true, multi_value: true };
  const read = wabt.readWasm(base.wasm, { ...features, readDebugNames: false });
  read.generateNames();
  read.applyNames();
  const text = read.toText({});
  read.destroy();
  const build = (count: number): Uint8Array => {
    const extra = Array.from({ length: count }, (_, i) => filler(i)).join('');
    const src = `${text.slice(0, text.lastIndexOf(')'))}${extra})\n`;
    const mod = wabt.parseWat('big.wat', src, features);
    try {
      return mod.toBinary({}).buffer;
    } finally {
      mod.destroy();
    }
  };
  const per = Math.max(1, build(100).length - base.wasm.length) / 100;
  let count = Math.ceil((bytes - base.wasm.length) / per);
  let wasm = build(count);
  while (wasm.length < bytes) wasm = build((count += Math.ceil((bytes - wasm.length) / per) + 1));
  const path = join(mkdtempSync(join(tmpdir(), 'charms-big-app-')), 'app.wasm');
  writeFileSync(path, wasm);
  return { wasm, vk: toHex(sha256(wasm)), path };
}
