/** WAT → wasm with wabt (dev dependency), with the proposals wasmi 1.1.0 accepts (no SIMD, threads, exceptions). */
import wabtInit from 'wabt';

type Wabt = Awaited<ReturnType<typeof wabtInit>>;
let wabt: Promise<Wabt> | undefined;

export async function watToWasm(name: string, text: string): Promise<Uint8Array> {
  wabt ??= wabtInit();
  const w = await wabt;
  const mod = w.parseWat(name, text, {
    bulk_memory: true,
    reference_types: true,
    tail_call: true,
    multi_value: true,
    sign_extension: true,
    sat_float_to_int: true,
    mutable_globals: true,
  });
  try {
    mod.validate();
    return new Uint8Array(mod.toBinary({}).buffer);
  } finally {
    mod.destroy();
  }
}
