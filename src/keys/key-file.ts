import { mkdirSync, openSync, writeSync, closeSync } from 'node:fs';
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
