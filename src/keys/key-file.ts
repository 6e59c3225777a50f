import { closeSync, mkdirSync, openSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { CharmsError } from '../errors.js';

/**
 * Writes a secret file with mode 0600, creating parent directories (0700). Refuses to overwrite
 * an existing file: the `wx` flag makes the check and the creation one atomic step.
 */
export function writeSecretFile(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST')
      throw new CharmsError('IO', `${path} already exists: refusing to overwrite a key file (move it away or use --out)`);
    throw new CharmsError('IO', `cannot create ${path}: ${(e as Error).message}`);
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

/** Field names of the secret material our key files (and the reference's) hold. */
const SECRET_FIELD = /"?(secret_key|private_key|secretKey|privateKey|xprv|tprv)"?\s*:/;

/**
 * True when the file at `path` holds a secret key (an app key file, or any JSON/YAML with a
 * secret-key field). Only the first 64 KiB are looked at: key files are small.
 */
function holdsKey(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false; // absent (or unreadable, and then the write fails by itself)
  }
  try {
    const buf = Buffer.alloc(64 * 1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return SECRET_FIELD.test(buf.subarray(0, n).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a non-secret output file (a signature, a build artefact) but never over a file that
 * holds a key: losing a secret key to a typo in `--out` cannot be undone.
 */
export function writeOutputFile(path: string, text: string): void {
  if (holdsKey(path)) throw new CharmsError('IO', `${path} holds a secret key: refusing to overwrite it (choose another --out path)`);
  writeFileSync(path, text);
}
