/**
 * Fast start for the CLI and the worker threads. `npm run build` also writes one CommonJS bundle
 * per entry point (scripts/bundle.mjs: `dist/<entry>.js` → `dist/bundle/<entry>.cjs`); loading
 * one file instead of ~150 ES modules, with V8's code cache for it, cuts the module-loading part
 * of a command's start by most of its ~90 ms. Node 20 has no built-in compile cache
 * (`module.enableCompileCache` came in 22.1), so the cache is kept here: `<bundle>.v8cache` beside
 * the bundle, written once by the first process that runs it (or rewritten when V8 rejects it,
 * e.g. after a Node upgrade). A bundle older than its entry's ES module (a `tsc`-only rebuild) is
 * not used. `CHARMS_NO_BUNDLE=1` runs the ES modules: the callers pass `noBundle` (settings/env.ts
 * `noBundleOf`). Node only.
 */
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script, constants } from 'node:vm';
import { threadId } from 'node:worker_threads';

const distDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The bundle built from this ES module of `dist/` (or of `root`), if there is one that is up to
 * date and `noBundle` (CHARMS_NO_BUNDLE) is not set.
 */
export function bundleOf(entry: URL, noBundle: boolean, root = distDir): string | undefined {
  if (noBundle || entry.protocol !== 'file:') return undefined;
  const esm = fileURLToPath(entry);
  const rel = relative(root, esm);
  if (rel.startsWith('..') || !rel.endsWith('.js')) return undefined;
  const file = join(root, 'bundle', rel.replace(/\.js$/, '.cjs'));
  try {
    return statSync(file).mtimeMs >= statSync(esm).mtimeMs ? file : undefined;
  } catch {
    return undefined;
  }
}

/** How the code cache served a load: used, absent (then written), or refused by V8 / stale. */
export type CacheUse = 'hit' | 'miss' | 'rejected' | 'stale';

export interface LoadedBundle {
  exports: Record<string, unknown>;
  cache: CacheUse;
}

// The cache starts with the bundle's size and mtime: V8 itself checks only the source's length,
// so a rebuilt bundle of the same length would otherwise run with the old bundle's code.
const HEADER = 16;
const stamp = (file: string): Buffer => {
  const s = statSync(file);
  const b = Buffer.alloc(HEADER);
  b.writeDoubleLE(s.size, 0);
  b.writeDoubleLE(s.mtimeMs, 8);
  return b;
};

const readIfThere = (file: string): Buffer | undefined => {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
};

/**
 * Runs a CommonJS bundle as Node would `require` it, through the code cache beside it, and
 * returns its exports. `writeCache`: 'exit' writes a missing cache when the process exits (it
 * then holds the functions the run compiled), 'now' right after the bundle's top level.
 */
export function runBundle(file: string, writeCache: 'now' | 'exit' = 'exit'): LoadedBundle {
  const cacheFile = `${file}.v8cache`;
  const head = stamp(file);
  let cachedData: Buffer | undefined;
  let cache: CacheUse = 'miss';
  const c = readIfThere(cacheFile);
  if (c) {
    if (c.length > HEADER && c.subarray(0, HEADER).equals(head)) cachedData = c.subarray(HEADER);
    else cache = 'stale';
  }
  const source = readFileSync(file, 'utf8').replace(/^#!.*/, '');
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER, // import() as in any module
    ...(cachedData ? { cachedData } : {}),
  });
  if (cachedData) cache = script.cachedDataRejected ? 'rejected' : 'hit';
  const mod = { exports: {} as Record<string, unknown> };
  const fn = script.runInThisContext() as (...a: unknown[]) => void;
  fn.call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
  if (cache !== 'hit') {
    const save = (): void => {
      // best effort: an install directory may be read-only; a temp name + rename never leaves a
      // half-written cache for a concurrent process to read
      const tmp = `${cacheFile}.${process.pid}.${threadId}.tmp`;
      try {
        writeFileSync(tmp, Buffer.concat([head, script.createCachedData()]));
        renameSync(tmp, cacheFile);
      } catch {
        rmSync(tmp, { force: true }); // no cache: the next start compiles again
      }
    };
    if (writeCache === 'now') save();
    else process.once('exit', save);
  }
  return { exports: mod.exports, cache };
}

/** The entry's exports: from its bundle when there is one, else the ES module itself. */
export async function loadEntry<T>(entry: URL, noBundle: boolean): Promise<T> {
  const bundle = bundleOf(entry, noBundle);
  return (bundle ? runBundle(bundle).exports : await import(entry.href)) as T;
}

/** The worker script that runs a bundle (its path in `workerData.bundle`): bundled itself when it can be. */
export function bundleWorker(noBundle: boolean): string | URL {
  const esm = new URL('./bundle-worker.js', import.meta.url);
  return bundleOf(esm, noBundle) ?? esm;
}
