/**
 * Access to `../shared` (vectors and keys beside the checkout) for tests. Tests that need it call
 * `sharedOrSkip(t)` and are skipped with a visible notice when it is absent (fresh clone).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { skipOrFail } from './require.js';

const here = dirname(fileURLToPath(import.meta.url));
/** Repo root: dist/testing → ../.. ; src/testing → ../.. */
export const repoRoot = resolve(here, '..', '..');
export const sharedDir = process.env.CHARMS_SHARED_DIR ?? resolve(repoRoot, '..', 'shared');
export const hasShared = existsSync(join(sharedDir, 'vectors'));

/**
 * Returns true if shared/ is present; otherwise marks the test skipped with a notice (or fails
 * it under CHARMS_REQUIRE_ALL=1, see require.ts).
 */
export function sharedOrSkip(t: { skip: (msg?: string) => void }): boolean {
  if (hasShared) return true;
  skipOrFail(t, `../shared not found at ${sharedDir} (set CHARMS_SHARED_DIR)`);
  return false;
}

export const sharedPath = (...rel: string[]): string => join(sharedDir, ...rel);
export const readShared = (...rel: string[]): Buffer => readFileSync(sharedPath(...rel));
export const readSharedText = (...rel: string[]): string => readFileSync(sharedPath(...rel), 'utf8');
export const readSharedJson = <T = any>(...rel: string[]): T => JSON.parse(readSharedText(...rel)) as T;
