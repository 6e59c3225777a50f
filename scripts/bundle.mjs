// Writes the CommonJS bundles that the CLI and the worker threads start from (src/util/bundle.ts
// explains why): dist/<entry>.js → dist/bundle/<entry>.cjs, after `tsc`. Without esbuild (an
// install without dev dependencies) it says so and the commands run from the ES modules.
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const ENTRIES = ['cli/main.js', 'runner/worker.js', 'prover/proof-worker.js', 'indexer/verify-worker.js', 'util/bundle-worker.js'];

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  console.error('bundle: esbuild is not installed; the CLI will load the ES modules (a slower start)');
  process.exit(0);
}

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// dev and optional dependencies are optional at run time (tests, app builds, ZMQ), ioredis and
// prom-client are for the servers only (loaded from node_modules when a server starts), and the
// index's database clients are for `charms index` only (better-sqlite3 and zeromq load native
// addons from their package directories): never inlined
const external = [
  ...Object.keys(pkg.devDependencies ?? {}),
  ...Object.keys(pkg.optionalDependencies ?? {}),
  'ioredis',
  'prom-client',
  'better-sqlite3',
  'better-sqlite3-napi',
  'pg',
].flatMap((d) => [d, `${d}/*`]);

/**
 * Each module keeps its own `import.meta.url` (worker scripts, templates, package.json and the
 * instrumenter's sources are found relative to it): rewritten to the module's place in dist/.
 */
// defined once at the top of each bundle (BANNER), where `require` is the bundle's own: a module
// may have a local named `require` (mock-mcl.ts has) that would shadow it at the use site
const MODULE_URL = '__charmsModuleUrl';
// ("use strict" first: esbuild's own directive no longer opens the file)
const BANNER = `"use strict";\nconst ${MODULE_URL} = (rel) => require('node:url').pathToFileURL(require('node:path').join(__dirname, rel)).href;`;
const ownUrls = (bundleDir) => ({
  name: 'own-module-urls',
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, (args) => {
      if (!args.path.startsWith(dist + sep)) return undefined;
      const rel = relative(bundleDir, args.path).split(sep).join('/');
      const text = readFileSync(args.path, 'utf8').replaceAll('import.meta.url', `${MODULE_URL}(${JSON.stringify(rel)})`);
      if (text.includes('import.meta')) throw new Error(`${args.path}: import.meta other than .url cannot be bundled`);
      return { contents: text, loader: 'js' };
    });
  },
});

/**
 * mcl-wasm decodes its embedded 436 KB module with a callback per byte (~40 ms and much garbage
 * at every start); Node's base64 decoder gives the same bytes in under a millisecond.
 */
const MCL_DECODE = 'Uint8Array.from(atob(wasmBase64), function (c) { return c.charCodeAt(0); })';
const mclDecode = {
  name: 'mcl-decode',
  setup(build) {
    build.onLoad({ filter: /mcl-wasm[\\/]dist[\\/]mcl_c\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes(MCL_DECODE)) {
        console.error('bundle: mcl-wasm decodes its module differently than expected; left as it is');
        return undefined;
      }
      return { contents: text.replace(MCL_DECODE, "Buffer.from(wasmBase64, 'base64')"), loader: 'js' };
    });
  },
};

rmSync(join(dist, 'bundle'), { recursive: true, force: true }); // also drops the old code caches
for (const entry of ENTRIES) {
  const outfile = join(dist, 'bundle', entry.replace(/\.js$/, '.cjs'));
  await esbuild.build({
    entryPoints: [join(dist, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external,
    plugins: [ownUrls(dirname(outfile)), mclDecode],
    banner: { js: BANNER },
    minifyWhitespace: true, // less to read at every start; names are kept, the .map has the lines
    sourcemap: true,
    logLevel: 'warning',
  });
}
