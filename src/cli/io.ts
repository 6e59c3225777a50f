/** File and input helpers shared by CLI commands. */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CharmsError } from '../errors.js';
import type { CliContext } from './define.js';

export function readFileBytes(path: string, what: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (e) {
    // Node's message names the code and the path ("ENOENT: no such file or directory, open '…'")
    const why = (e as Error).message;
    throw new CharmsError('IO', why.includes(path) ? `cannot read ${what}: ${why}` : `cannot read ${what} ${path}: ${why}`, { cause: e });
  }
}

export const readFileText = (path: string, what: string): string => new TextDecoder().decode(readFileBytes(path, what));

/**
 * The project's settings directory: `.svc/` (ours), falling back to the reference's `.charms/`
 * when only that one exists.
 */
function settingsDir(cwd: string): string {
  const ours = join(cwd, '.svc');
  const theirs = join(cwd, '.charms');
  if (!existsSync(ours) && existsSync(theirs)) return theirs;
  return ours;
}

export const defaultKeyFile = (cwd: string): string => join(settingsDir(cwd), 'app-key.json');

/** Reads `--spell` style inputs: a path, `/dev/stdin` or `-` meaning stdin. */
export async function readInput(ctx: CliContext, path: string, what: string): Promise<string> {
  if (path === '-' || path === '/dev/stdin') return new TextDecoder().decode(await ctx.readStdin());
  return readFileText(resolve(ctx.cwd, path), what);
}
