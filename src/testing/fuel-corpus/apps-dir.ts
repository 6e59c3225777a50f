/** Where `npm run test:apps` finds the published app binaries (never committed): `$CHARMS_APPS_DIR` or `<repo>/.apps`. */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../shared.js';
import { APP_BINARIES, type AppBinary } from './app-scenarios.js';

export const appsDir = (): string => process.env.CHARMS_APPS_DIR ?? join(repoRoot, '.apps');

export const appsVectorsPath = (): string => join(repoRoot, 'vectors', 'runner-fuel', 'apps.json');

export interface AppFuelFact {
  name: string;
  binary: AppBinary;
  sha256: string;
  fuel: number;
  verdict: string;
}

/** Reads `<binary>.wasm` from the apps folder and checks its SHA-256; throws saying how to get it. */
export function readAppBinary(binary: AppBinary): Uint8Array {
  const path = join(appsDir(), `${binary}.wasm`);
  const how = 'see docs/apps.md "Exact cycles" for the step that puts the published binaries there';
  if (!existsSync(path)) throw new Error(`${path} is missing; ${how}`);
  const bytes = new Uint8Array(readFileSync(path));
  const got = createHash('sha256').update(bytes).digest('hex');
  if (got !== APP_BINARIES[binary]) throw new Error(`${path} has SHA-256 ${got}, expected ${APP_BINARIES[binary]}; ${how}`);
  return bytes;
}
