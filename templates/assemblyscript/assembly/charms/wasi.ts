// WASI preview 1 host functions the Charms app runner links (and nothing else).

@external("wasi_snapshot_preview1", "fd_read")
declare function fd_read(fd: u32, iovs: usize, iovsLen: u32, nread: usize): u32;

@external("wasi_snapshot_preview1", "fd_write")
declare function fd_write(fd: u32, iovs: usize, iovsLen: u32, nwritten: usize): u32;

/** Reads all of stdin (the CBOR-encoded app input). */
export function readStdin(): Uint8Array {
  const chunk = 65536;
  let out = new Uint8Array(0);
  const buf = new Uint8Array(chunk);
  const iov = new StaticArray<u32>(2);
  const nread = new StaticArray<u32>(1);
  while (true) {
    iov[0] = <u32>buf.dataStart;
    iov[1] = <u32>chunk;
    const err = fd_read(0, changetype<usize>(iov), 1, changetype<usize>(nread));
    if (err != 0) break;
    const n = <i32>nread[0];
    if (n == 0) break;
    const next = new Uint8Array(out.length + n);
    next.set(out);
    next.set(buf.subarray(0, n), out.length);
    out = next;
  }
  return out;
}

/** Writes a line to stderr (the only output stream apps have). */
export function eprintln(s: string): void {
  const bytes = Uint8Array.wrap(String.UTF8.encode(s + "\n"));
  const iov = new StaticArray<u32>(2);
  iov[0] = <u32>bytes.dataStart;
  iov[1] = <u32>bytes.length;
  const written = new StaticArray<u32>(1);
  fd_write(2, changetype<usize>(iov), 1, changetype<usize>(written));
}

/** Replaces AssemblyScript's `env.abort` import (apps may not import it). */
export function abortHandler(message: string | null, fileName: string | null, line: u32, column: u32): void {
  eprintln(
    "abort: " + (message ? message : "") + " at " + (fileName ? fileName : "?") + ":" + line.toString() + ":" + column.toString(),
  );
  unreachable();
}
