/**
 * Prepared app modules on disk, for one-shot commands (`spell check`, `spell prove`): validating
 * and instrumenting a toad-token-sized binary costs more than running it, and a developer proves
 * with the same binaries again and again. An entry holds the instrumented bytes and the names of
 * the metering exports, keyed by SHA-256 of
 *   the app binary ‖ the instrumenter's own code (so any change to the fuel model or the
 *   instrumentation makes new keys) ‖ the fuel budget ‖ the memory and table caps.
 *
 * The directory is read as hostile input: an entry is used only if its checksum (over key and
 * payload) matches and the bytes compile; anything else is ignored and rewritten. Writes go to a
 * temporary file renamed into place, so concurrent writers never leave a torn entry. Entries
 * larger than 32 MiB are not kept. Node only (used from the runner's worker threads).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { MeterExports, ModuleLimits } from './instrument.js';
import type { Logger } from '../infra/log.js';

const MAGIC = Buffer.from('charms-ts prepared module v1\n');
const MAX_ENTRY = 32 * 1024 * 1024;
/** The files whose code decides what instrumentation produces. */
const INSTRUMENTER_FILES = ['instrument.js', 'fuel-model.js', 'wasm-code.js', 'wasm-module.js', 'wasm-bytes.js', 'policy.js'];

let instrumenterDigest: Buffer | undefined;
function instrumenterHash(): Buffer {
  if (!instrumenterDigest) {
    const h = createHash('sha256');
    for (const f of INSTRUMENTER_FILES) h.update(readFileSync(new URL(`./${f}`, import.meta.url)));
    instrumenterDigest = h.digest();
  }
  return instrumenterDigest;
}

/** The entry key (hex) for this binary under these settings. */
export function preparedKey(wasm: Uint8Array, fuelLimit: bigint, limits: ModuleLimits): string {
  return createHash('sha256')
    .update(createHash('sha256').update(wasm).digest())
    .update(instrumenterHash())
    .update(`${fuelLimit}:${limits.memoryPages}:${limits.tableElements}`)
    .digest('hex');
}

export interface PreparedEntry {
  bytes: Uint8Array;
  meter: MeterExports;
}

const checksum = (key: string, meta: Buffer, bytes: Uint8Array): Buffer => createHash('sha256').update(key).update(meta).update(bytes).digest();

/** The entry for `key`, or undefined when absent, unreadable or not intact. */
export function readPrepared(dir: string, key: string): PreparedEntry | undefined {
  let file: Buffer;
  try {
    file = readFileSync(join(dir, `${key}.bin`));
  } catch {
    return undefined;
  }
  // magic ‖ checksum (32) ‖ meta length (u32 BE) ‖ meta JSON ‖ instrumented bytes
  const at = MAGIC.length;
  if (file.length < at + 36 || !file.subarray(0, at).equals(MAGIC)) return undefined;
  const sum = file.subarray(at, at + 32);
  const metaLen = file.readUInt32BE(at + 32);
  if (metaLen > 4096 || at + 36 + metaLen > file.length) return undefined;
  const meta = file.subarray(at + 36, at + 36 + metaLen);
  const bytes = file.subarray(at + 36 + metaLen);
  if (!checksum(key, meta, bytes).equals(sum)) return undefined;
  let m: unknown;
  try {
    m = JSON.parse(meta.toString('utf8'));
  } catch {
    return undefined;
  }
  const o = m as Record<string, unknown>;
  if (typeof o.fuel !== 'string' || typeof o.trap !== 'string' || typeof o.depth !== 'string' || !(o.start === undefined || typeof o.start === 'string'))
    return undefined;
  const meter: MeterExports = { fuel: o.fuel, trap: o.trap, depth: o.depth, ...(typeof o.start === 'string' ? { start: o.start } : {}) };
  return { bytes: new Uint8Array(bytes), meter };
}

/** Directories found unwritable in this thread: skipped from then on, warned about once. */
const unwritable = new Set<string>();

/**
 * `mkdir -p` one level at a time, a bounded walk: Node 20's recursive mkdirSync loops forever on
 * ENOENT under /proc, and a component that is a regular file must fail (ENOTDIR), not spin.
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  let d = resolve(dir);
  for (let i = 0; i < 256; i++) {
    try {
      if (statSync(d).isDirectory()) break;
      throw Object.assign(new Error(`${d} is not a directory`), { code: 'ENOTDIR' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    missing.push(d);
    const up = dirname(d);
    if (up === d) break;
    d = up;
  }
  for (const m of missing.reverse()) {
    try {
      mkdirSync(m);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

/**
 * Keeps an entry (best effort: a cache that cannot be written is no error). A directory that
 * cannot be written is skipped for the rest of the thread, with one warning on `log`.
 */
export function writePrepared(dir: string, key: string, entry: PreparedEntry, log: Logger): void {
  if (unwritable.has(dir)) return;
  const meta = Buffer.from(JSON.stringify(entry.meter));
  if (entry.bytes.length + meta.length > MAX_ENTRY) return;
  const head = Buffer.alloc(36);
  checksum(key, meta, entry.bytes).copy(head, 0);
  head.writeUInt32BE(meta.length, 32);
  const tmp = join(dir, `${key}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    makeDirs(dir);
    writeFileSync(tmp, Buffer.concat([MAGIC, head, meta, entry.bytes]));
    renameSync(tmp, join(dir, `${key}.bin`));
  } catch (e) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // ENOTDIR and the like: there is no temporary file to remove
    }
    unwritable.add(dir);
    log.warn(
      `the app cache ${dir} cannot be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): continuing without it (SVC_APP_CACHE_DIR=off silences this)`,
    );
  }
}
