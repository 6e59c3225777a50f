/**
 * The protocol vectors and keys the tests read. They live in the repository (`vectors/`, keys in
 * `vectors/keys/`, where each one comes from: `vectors/PROVENANCE.md`), so a bare clone runs the
 * whole suite. `CHARMS_SHARED_DIR` points at another copy laid out as the shared directory
 * (`vectors/`, `keys/`). Paths are always written in that layout: `sharedPath('vectors', 'chain', f)`,
 * `sharedPath('keys', 'vk', f)`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipOrFail } from './require.js';

const here = dirname(fileURLToPath(import.meta.url));
/** Repo root: dist/testing → ../.. ; src/testing → ../.. */
export const repoRoot = resolve(here, '..', '..');
const override = process.env.CHARMS_SHARED_DIR;
/**
 * Where the vectors come from: `CHARMS_SHARED_DIR`, else the repository root (its `vectors/`).
 * @public (kept for callers on other branches; read files through `sharedPath`)
 */
export const sharedDir = override ?? repoRoot;
export const hasShared = existsSync(join(sharedDir, 'vectors'));

/**
 * Returns true if the vectors are present; otherwise marks the test skipped with a notice (or
 * fails it under CHARMS_REQUIRE_ALL=1, see require.ts). In the repository they always are: only a
 * `CHARMS_SHARED_DIR` pointing at nothing makes this skip.
 */
export function sharedOrSkip(t: { skip: (msg?: string) => void }): boolean {
  if (hasShared) return true;
  skipOrFail(t, `test vectors not found at ${join(sharedDir, 'vectors')} (CHARMS_SHARED_DIR)`);
  return false;
}

/** A path in the shared layout; in the repository `keys/…` sits under `vectors/keys/…`. */
export function sharedPath(...rel: string[]): string {
  if (override === undefined && rel[0] === 'keys') return join(repoRoot, 'vectors', ...rel);
  return join(sharedDir, ...rel);
}
export const readShared = (...rel: string[]): Buffer => readFileSync(sharedPath(...rel));
export const readSharedText = (...rel: string[]): string => readFileSync(sharedPath(...rel), 'utf8');
export const readSharedJson = <T = any>(...rel: string[]): T => JSON.parse(readSharedText(...rel)) as T;
