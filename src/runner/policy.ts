/**
 * The reference runner's acceptance rules for an app module, checked before anything runs.
 */
import { CharmsError } from '../errors.js';
import { decodeBody } from './wasm-code.js';
import { Wasm } from './wasm-api.js';
import { funcTypeOf, parseModule, type FuncType, type ParsedModule } from './wasm-module.js';

export const WASI_MODULE = 'wasi_snapshot_preview1';

const i32 = 'i32' as const;
/** The only host functions the reference links, with their exact signatures. */
const WASI_IMPORTS: Readonly<Record<string, FuncType>> = {
  fd_read: { params: [i32, i32, i32, i32], results: [i32] },
  fd_write: { params: [i32, i32, i32, i32], results: [i32] },
  environ_get: { params: [i32, i32], results: [i32] },
  environ_sizes_get: { params: [i32, i32], results: [i32] },
  proc_exit: { params: [i32], results: [] },
  random_get: { params: [i32, i32], results: [i32] },
};

const sameType = (a: FuncType, b: FuncType): boolean =>
  a.params.length === b.params.length &&
  a.results.length === b.results.length &&
  a.params.every((t, i) => t === b.params[i]) &&
  a.results.every((t, i) => t === b.results[i]);

const sig = (t: FuncType): string => `(${t.params.join(', ')}) -> (${t.results.join(', ')})`;

/** Parses `wasm` and throws a CharmsError naming the first rule it breaks. */
export function checkAppModule(wasm: Uint8Array): ParsedModule {
  const m = parseModule(wasm);
  for (const imp of m.imports) {
    const where = `import ${imp.module}.${imp.name}`;
    if (imp.kind !== 'func') throw new CharmsError('UNSUPPORTED', `wasm module: ${where}: only function imports are linked (got a ${imp.kind})`);
    const expected = imp.module === WASI_MODULE ? WASI_IMPORTS[imp.name] : undefined;
    if (!expected)
      throw new CharmsError(
        'UNSUPPORTED',
        `wasm module: ${where} is not provided; apps may only import ${WASI_MODULE}.{${Object.keys(WASI_IMPORTS).join(', ')}}`,
      );
    const actual = m.types[imp.typeIndex];
    if (!actual || !sameType(actual, expected))
      throw new CharmsError('UNSUPPORTED', `wasm module: ${where} has type ${actual ? sig(actual) : '?'}, expected ${sig(expected)}`);
  }
  const start = m.exports.find((e) => e.name === '_start');
  if (start?.kind !== 'func') throw new CharmsError('INVALID_INPUT', 'wasm module: no exported function `_start` (the app entry point)');
  const startType = funcTypeOf(m, start.index);
  if (startType.params.length !== 0 || startType.results.length !== 0)
    throw new CharmsError('INVALID_INPUT', `wasm module: \`_start\` must have type () -> (), got ${sig(startType)}`);
  for (const b of m.bodies) decodeBody(wasm, b.start, b.end);
  engineValidate(wasm);
  return m;
}

/**
 * The engine's own validation of the original module (types, indices, stack discipline), so
 * that the instrumenter only ever sees valid modules. Its message names what is wrong.
 */
function engineValidate(wasm: Uint8Array): void {
  if (Wasm.validate(wasm)) return;
  try {
    new Wasm.Module(wasm);
  } catch (e) {
    const why = (e instanceof Error ? e.message : String(e)).replace(/^WebAssembly\.Module\(\): /, '');
    throw new CharmsError('INVALID_INPUT', `wasm module: invalid: ${why}`, { cause: e });
  }
  throw new CharmsError('INVALID_INPUT', 'wasm module: invalid (refused by the engine)');
}
