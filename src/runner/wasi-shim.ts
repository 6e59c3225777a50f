/**
 * The six WASI host functions exactly as the reference runner provides them: stdin from the
 * given bytes, writes only to stderr (captured), empty environment, `proc_exit` as a no-op that
 * returns, and `random_get` from ChaCha12 seeded with SHA-256(stdin). Where the reference's host
 * panics (bad pointers in fd_read/random_get, no memory export in random_get) we throw, which
 * fails the run like a trap.
 */
import { createHash } from 'node:crypto';
import { CharmsError } from '../errors.js';
import { ChaCha12Rng } from './chacha-rng.js';
import { WASI_MODULE } from './policy.js';
import { Wasm, type WasmImports, type WasmInstance, type WasmMemory } from './wasm-api.js';

/** Upper bound on captured stderr so a chatty app cannot exhaust memory. */
const MAX_CAPTURED_STDERR = 4 * 1024 * 1024;
/** Most iovecs one fd_read/fd_write takes (POSIX/WASI IOV_MAX); more is EINVAL before any work. */
const MAX_IOVECS = 1024;
/** Most bytes one random_get produces (ChaCha12 here runs at ~16 MB/s; apps ask for 16–32 bytes). */
const MAX_RANDOM_BYTES_PER_CALL = 64 * 1024;
/** WASI errno EINVAL. */
const EINVAL = 28;

/**
 * A failure the reference host would turn into a process panic. Thrown through the app's call
 * stack and caught by `executeApp`, which reports it as the run's `error` (the app failed).
 */
export class HostPanic extends CharmsError {
  override name = 'HostPanic';
  constructor(message: string, cause?: unknown) {
    super('APP_FAILED', message, cause === undefined ? undefined : { cause });
  }
}

class OutOfBounds extends CharmsError {
  constructor(ptr: number, len: number) {
    super('APP_FAILED', `out of bounds memory access (address ${ptr}, length ${len})`);
  }
}

export interface WasiShim {
  imports: WasmImports;
  /** Call once the instance exists (its `memory` export is looked up by name, like the reference). */
  bind(instance: WasmInstance): void;
  stderr(): string;
  /** Code passed to the last `proc_exit`, if any. */
  exitCode(): number | undefined;
}

export function createWasiShim(stdin: Uint8Array): WasiShim {
  const input = stdin.slice();
  let inputPos = 0;
  const rng = new ChaCha12Rng(new Uint8Array(createHash('sha256').update(stdin).digest()));
  const chunks: Uint8Array[] = [];
  let captured = 0;
  let truncated = false;
  let exitCode: number | undefined;
  let memory: WasmMemory | undefined;

  const writeStderr = (b: Uint8Array): void => {
    if (captured >= MAX_CAPTURED_STDERR) {
      truncated = true;
      return;
    }
    const part = b.subarray(0, MAX_CAPTURED_STDERR - captured);
    chunks.push(part.slice());
    captured += part.length;
    if (part.length < b.length) truncated = true;
  };
  const hostError = (msg: string): number => {
    writeStderr(new TextEncoder().encode(`error: ${msg}\n`));
    return -1;
  };

  // Pointers are i32 in the reference and cast to usize: negative values are out of bounds.
  const view = (ptr: number, len: number): Uint8Array => {
    const buf = memory!.buffer;
    if (ptr < 0 || len < 0 || ptr + len > buf.byteLength) throw new OutOfBounds(ptr, len);
    return new Uint8Array(buf, ptr, len);
  };
  const readI32 = (ptr: number): number => {
    const b = view(ptr, 4);
    return new DataView(b.buffer, b.byteOffset, 4).getInt32(0, true);
  };
  const writeI32 = (ptr: number, v: number): void => {
    const b = view(ptr, 4);
    new DataView(b.buffer, b.byteOffset, 4).setInt32(0, v, true);
  };

  const fd_read = (fd: number, iovs: number, iovsLen: number, nread: number): number => {
    if (fd !== 0) return -1;
    if (!memory) return hostError('No memory export');
    if (iovsLen >>> 0 > MAX_IOVECS) return EINVAL;
    const iov: [number, number][] = [];
    for (let i = 0; i < iovsLen; i++) {
      const at = (iovs + i * 8) | 0;
      try {
        iov.push([readI32(at), readI32(at + 4)]);
      } catch (e) {
        throw new HostPanic(`fd_read: reading iovec ${i}: ${(e as Error).message}`, e);
      }
    }
    let total = 0;
    for (const [ptr, len] of iov) {
      const n = Math.min(len < 0 ? Infinity : len, input.length - inputPos);
      if (n <= 0) break;
      const data = input.subarray(inputPos, inputPos + n);
      inputPos += n;
      try {
        view(ptr, n).set(data);
      } catch (e) {
        throw new HostPanic(`fd_read: writing stdin data: ${(e as Error).message}`, e);
      }
      total += n;
    }
    try {
      writeI32(nread, total);
    } catch (e) {
      return hostError((e as Error).message);
    }
    return 0;
  };

  const fd_write = (fd: number, iovs: number, iovsLen: number, nwritten: number): number => {
    if (fd !== 2) return hostError('can only write to stderr');
    if (!memory) return hostError('No memory export');
    if (iovsLen >>> 0 > MAX_IOVECS) return EINVAL;
    try {
      // Check every iovec first (nothing is written if one is out of bounds), then copy only what
      // the capture budget still takes: never the whole request.
      const parts: Uint8Array[] = [];
      let total = 0;
      for (let i = 0; i < iovsLen; i++) {
        const at = (iovs + i * 8) | 0;
        const ptr = readI32(at);
        const len = readI32(at + 4);
        parts.push(view(ptr, len));
        total += len;
      }
      for (const p of parts) writeStderr(p);
      writeI32(nwritten, total | 0);
      return 0;
    } catch (e) {
      return hostError((e as Error).message);
    }
  };

  const environ_sizes_get = (countPtr: number, sizePtr: number): number => {
    if (!memory) return hostError('No memory export');
    try {
      writeI32(countPtr, 0);
      writeI32(sizePtr, 0);
      return 0;
    } catch (e) {
      return hostError((e as Error).message);
    }
  };

  const random_get = (buf: number, len: number): number => {
    if (!memory) throw new HostPanic('random_get: No memory export');
    if (len < 0) throw new HostPanic(`random_get: invalid length ${len}`);
    let target: Uint8Array;
    try {
      target = view(buf, len); // bounds first: no work for a request that cannot be written
    } catch (e) {
      throw new HostPanic(`random_get: failed to write random bytes: ${(e as Error).message}`, e);
    }
    if (len > MAX_RANDOM_BYTES_PER_CALL)
      throw new HostPanic(`random_get: ${len} bytes requested in one call; the runner produces at most ${MAX_RANDOM_BYTES_PER_CALL} per call`);
    rng.fillBytes(target);
    return 0;
  };

  const imports: WasmImports = {
    [WASI_MODULE]: {
      fd_read,
      fd_write,
      environ_get: () => 0,
      environ_sizes_get,
      proc_exit: (code: number) => {
        exitCode = code;
      },
      random_get,
    },
  };

  return {
    imports,
    bind(instance) {
      const mem = instance.exports['memory'];
      memory = mem instanceof Wasm.Memory ? mem : undefined;
    },
    stderr() {
      const all = new Uint8Array(captured);
      let o = 0;
      for (const c of chunks) {
        all.set(c, o);
        o += c.length;
      }
      const text = new TextDecoder('utf-8', { fatal: false }).decode(all);
      return truncated ? `${text}\n[stderr truncated at ${MAX_CAPTURED_STDERR} bytes]` : text;
    },
    exitCode: () => exitCode,
  };
}
