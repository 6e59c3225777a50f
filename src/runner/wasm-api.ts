/**
 * Typed access to the engine's `WebAssembly` global. The project compiles with `lib: ES2022`
 * and no DOM types, so the few parts the runner uses are declared here instead of globally.
 */
export interface WasmGlobal {
  value: unknown;
}
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
export type WasmImports = Record<string, Record<string, unknown>>;
export interface WasmModule {
  readonly __brand?: 'WebAssembly.Module';
}
export interface WasmInstance {
  readonly exports: Record<string, unknown>;
}

interface WasmNamespace {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: WasmImports) => WasmInstance;
  Memory: abstract new (...args: never[]) => WasmMemory;
  Global: abstract new (...args: never[]) => WasmGlobal;
  RuntimeError: abstract new (...args: never[]) => Error;
  LinkError: abstract new (...args: never[]) => Error;
  CompileError: abstract new (...args: never[]) => Error;
}

export const Wasm = (globalThis as unknown as { WebAssembly: WasmNamespace }).WebAssembly;
