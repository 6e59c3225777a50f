/**
 * Parses the sections of a wasm module that the app runner needs and enforces the reference
 * runner's policy: only the six WASI imports it links (with exact signatures), only the wasm
 * features wasmi 1.1.0 enables that V8 (Node 20) can also run, an exported `_start: () -> ()`.
 */
import { CharmsError } from '../errors.js';
import { WasmReader } from './wasm-bytes.js';

export type ValType = 'i32' | 'i64' | 'f32' | 'f64' | 'funcref' | 'externref';

export interface FuncType {
  params: ValType[];
  results: ValType[];
}

interface Import {
  module: string;
  name: string;
  kind: 'func' | 'table' | 'memory' | 'global';
  typeIndex: number;
}

interface Export {
  name: string;
  kind: 'func' | 'table' | 'memory' | 'global';
  index: number;
}

interface Global {
  type: ValType;
  mutable: boolean;
  /** Constant value of a plain `t.const` initialiser (for immutable-global folding). */
  constValue?: number | bigint | undefined;
}

interface Section {
  id: number;
  /** Offset of the section id byte. */
  headerStart: number;
  /** Content range (after the size prefix). */
  start: number;
  end: number;
}

interface FunctionBody {
  /** Content range of the code entry (locals + expression), without its size prefix. */
  start: number;
  end: number;
}

/** Limits of a memory (in 64 KiB pages) or a table (in elements). */
interface Limits {
  min: number;
  max?: number | undefined;
}

export interface ParsedModule {
  bytes: Uint8Array;
  sections: Section[];
  types: FuncType[];
  imports: Import[];
  importedFuncCount: number;
  /** Type index of each defined function. */
  funcTypeIndices: number[];
  globals: Global[];
  exports: Export[];
  start?: number;
  bodies: FunctionBody[];
  /** Defined memories (at most one) and tables, with their declared limits. */
  memories: Limits[];
  tables: { elemType: ValType; limits: Limits }[];
}

const unsupported = (msg: string): never => {
  throw new CharmsError('UNSUPPORTED', `wasm module: ${msg}`);
};

export function readValType(r: WasmReader): ValType {
  const b = r.u8();
  switch (b) {
    case 0x7f:
      return 'i32';
    case 0x7e:
      return 'i64';
    case 0x7d:
      return 'f32';
    case 0x7c:
      return 'f64';
    case 0x70:
      return 'funcref';
    case 0x6f:
      return 'externref';
    case 0x7b:
      return unsupported('SIMD (v128) is not allowed in Charms apps (the reference runner disables SIMD)');
    default:
      return unsupported(`value type 0x${b.toString(16)} (GC / typed function references) is not supported`);
  }
}

/** Limits of a memory or table; refuses shared (threads) and 64-bit memories. */
function readLimits(r: WasmReader, what: 'memory' | 'table'): Limits {
  const flags = r.u8();
  if (flags & 0x02) unsupported(`shared ${what} (threads/atomics) is not allowed in Charms apps`);
  if (flags & 0x04) unsupported(`64-bit ${what} (memory64) is not supported by the Node runner`);
  if (flags & ~0x01) unsupported(`${what} limits flag 0x${flags.toString(16)} is not supported`);
  const min = r.u32();
  const max = flags & 0x01 ? r.u32() : undefined;
  if (max !== undefined && max < min) throw new CharmsError('INVALID_INPUT', `wasm module: ${what} maximum ${max} is below its minimum ${min}`);
  return { min, max };
}

/** Reads a constant expression; only single-instruction forms are accepted (no extended-const). */
function readConstExpr(r: WasmReader): number | bigint | undefined {
  const op = r.u8();
  let value: number | bigint | undefined;
  switch (op) {
    case 0x41:
      value = r.s32();
      break;
    case 0x42:
      value = r.s64();
      break;
    case 0x43: {
      const b = r.bytesN(4);
      value = new DataView(b.buffer, b.byteOffset, 4).getFloat32(0, true);
      break;
    }
    case 0x44: {
      const b = r.bytesN(8);
      value = new DataView(b.buffer, b.byteOffset, 8).getFloat64(0, true);
      break;
    }
    case 0x23:
    case 0xd2:
      r.u32();
      break;
    case 0xd0:
      r.u8();
      break;
    default:
      unsupported(`constant expression opcode 0x${op.toString(16)} is not supported`);
  }
  const end = r.u8();
  if (end !== 0x0b) unsupported('extended constant expressions are not supported by the Node runner');
  return value;
}

const EXPORT_KINDS = ['func', 'table', 'memory', 'global'] as const;

export function parseModule(bytes: Uint8Array): ParsedModule {
  if (bytes.length < 8 || bytes[0] !== 0x00 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d)
    throw new CharmsError('INVALID_INPUT', 'wasm module: missing the \\0asm magic header');
  if (bytes[4] !== 1 || bytes[5] !== 0 || bytes[6] !== 0 || bytes[7] !== 0)
    throw new CharmsError('INVALID_INPUT', 'wasm module: only binary format version 1 is supported');

  const m: ParsedModule = {
    bytes,
    sections: [],
    types: [],
    imports: [],
    importedFuncCount: 0,
    funcTypeIndices: [],
    globals: [],
    exports: [],
    bodies: [],
    memories: [],
    tables: [],
  };
  const r = new WasmReader(bytes, 8);
  while (!r.done) {
    const headerStart = r.pos;
    const id = r.u8();
    const size = r.u32();
    const start = r.pos;
    const end = start + size;
    if (end > bytes.length) throw new CharmsError('INVALID_INPUT', `wasm module: section ${id} runs past the end of the module`);
    m.sections.push({ id, headerStart, start, end });
    r.pos = end;
    const s = new WasmReader(bytes, start, end);
    switch (id) {
      case 0: // custom
        break;
      case 1:
        readTypes(s, m);
        break;
      case 2:
        readImports(s, m);
        break;
      case 3: {
        const n = s.u32();
        for (let i = 0; i < n; i++) m.funcTypeIndices.push(s.u32());
        break;
      }
      case 4: {
        const n = s.u32();
        for (let i = 0; i < n; i++) {
          const elemType = readValType(s);
          m.tables.push({ elemType, limits: readLimits(s, 'table') });
        }
        break;
      }
      case 5: {
        const n = s.u32();
        if (n > 1) unsupported('multiple memories (multi-memory) are not supported by the Node runner');
        for (let i = 0; i < n; i++) m.memories.push(readLimits(s, 'memory'));
        break;
      }
      case 6: {
        const n = s.u32();
        for (let i = 0; i < n; i++) {
          const type = readValType(s);
          const mut = s.u8();
          if (mut > 1) unsupported(`global mutability flag ${mut} is not supported`);
          const constValue = readConstExpr(s);
          m.globals.push({ type, mutable: mut === 1, constValue });
        }
        break;
      }
      case 7: {
        const n = s.u32();
        for (let i = 0; i < n; i++) {
          const name = s.name();
          const kind = s.u8();
          const index = s.u32();
          const k = EXPORT_KINDS[kind] ?? unsupported(`export kind ${kind} (tags) is not supported`);
          m.exports.push({ name, kind: k, index });
        }
        break;
      }
      case 8:
        m.start = s.u32();
        break;
      case 9: // element
      case 11: // data
      case 12: // data count
        break; // kept verbatim; V8 validates them
      case 10: {
        const n = s.u32();
        for (let i = 0; i < n; i++) {
          const len = s.u32();
          if (s.pos + len > end) throw new CharmsError('INVALID_INPUT', `wasm module: function body ${i} runs past the end of the code section`);
          m.bodies.push({ start: s.pos, end: s.pos + len });
          s.pos += len;
        }
        break;
      }
      case 13:
        unsupported('exception handling (tag section) is not allowed in Charms apps');
        break;
      default:
        throw new CharmsError('INVALID_INPUT', `wasm module: unknown section id ${id}`);
    }
  }
  for (const [i, t] of m.funcTypeIndices.entries())
    if (t >= m.types.length)
      throw new CharmsError('INVALID_INPUT', `wasm module: function ${m.importedFuncCount + i} uses type ${t}, but the module defines ${m.types.length} types`);
  for (const imp of m.imports)
    if (imp.kind === 'func' && imp.typeIndex >= m.types.length)
      throw new CharmsError(
        'INVALID_INPUT',
        `wasm module: import ${imp.module}.${imp.name} uses type ${imp.typeIndex}, but the module defines ${m.types.length} types`,
      );
  if (m.bodies.length !== m.funcTypeIndices.length)
    throw new CharmsError(
      'INVALID_INPUT',
      `wasm module: function section declares ${m.funcTypeIndices.length} functions but the code section has ${m.bodies.length} bodies`,
    );
  return m;
}

function readTypes(s: WasmReader, m: ParsedModule): void {
  const n = s.u32();
  for (let i = 0; i < n; i++) {
    const form = s.u8();
    if (form !== 0x60) unsupported(`type form 0x${form.toString(16)} (GC types) is not allowed in Charms apps`);
    const params: ValType[] = [];
    const results: ValType[] = [];
    const np = s.u32();
    for (let j = 0; j < np; j++) params.push(readValType(s));
    const nr = s.u32();
    for (let j = 0; j < nr; j++) results.push(readValType(s));
    m.types.push({ params, results });
  }
}

function readImports(s: WasmReader, m: ParsedModule): void {
  const n = s.u32();
  for (let i = 0; i < n; i++) {
    const module = s.name();
    const name = s.name();
    const kind = s.u8();
    let typeIndex = -1;
    if (kind === 0) {
      typeIndex = s.u32();
      m.importedFuncCount++;
    } else if (kind === 1) {
      readValType(s);
      readLimits(s, 'table');
    } else if (kind === 2) {
      readLimits(s, 'memory');
    } else if (kind === 3) {
      readValType(s);
      s.u8();
    } else {
      unsupported(`import kind ${kind} (tags) is not supported`);
    }
    const k = EXPORT_KINDS[kind]!;
    m.imports.push({ module, name, kind: k, typeIndex });
  }
}

/** Type of function `index` in the module's function index space (imports first). */
export function funcTypeOf(m: ParsedModule, index: number): FuncType {
  let typeIndex: number | undefined;
  if (index < m.importedFuncCount) {
    let k = 0;
    for (const imp of m.imports)
      if (imp.kind === 'func' && k++ === index) {
        typeIndex = imp.typeIndex;
        break;
      }
  } else {
    typeIndex = m.funcTypeIndices[index - m.importedFuncCount];
  }
  const t = typeIndex === undefined ? undefined : m.types[typeIndex];
  if (!t) throw new CharmsError('INVALID_INPUT', `wasm module: function ${index} has no valid type`);
  return t;
}
