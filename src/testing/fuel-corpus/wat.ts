/** WAT → wasm with wabt (dev dependency), with the proposals wasmi 1.1.0 accepts (no SIMD, threads, exceptions). */
import wabtInit from 'wabt';

type Wabt = Awaited<ReturnType<typeof wabtInit>>;
let wabt: Promise<Wabt> | undefined;

/**
 * `text` compiled and validated; `anyFeature` also turns on the proposals wasmi refuses (threads,
 * SIMD, exceptions) and skips validation, for modules the runner must refuse.
 */
export async function watToWasm(name: string, text: string, anyFeature = false): Promise<Uint8Array> {
  wabt ??= wabtInit();
  const w = await wabt;
  const mod = w.parseWat(name, text, {
    ...(anyFeature ? { threads: true, simd: true, exceptions: true } : {}),
    bulk_memory: true,
    reference_types: true,
    tail_call: true,
    multi_value: true,
    sign_extension: true,
    sat_float_to_int: true,
    mutable_globals: true,
  });
  try {
    if (!anyFeature) mod.validate();
    return new Uint8Array(mod.toBinary({}).buffer);
  } finally {
    mod.destroy();
  }
}
