/**
 * App projects: detect the kind (Rust/Cargo or AssemblyScript), build to wasm32-wasip1, and find
 * the release binary.
 */
import { existsSync, readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CharmsError } from '../errors.js';

export type ProjectKind = 'rust' | 'assemblyscript';

export function projectKind(dir: string): ProjectKind {
  if (existsSync(join(dir, 'asconfig.json'))) return 'assemblyscript';
  if (existsSync(join(dir, 'Cargo.toml'))) return 'rust';
  throw new CharmsError('IO', `${dir} is not an app project (no Cargo.toml or asconfig.json): run this in an app directory`);
}

function cargoPackageName(dir: string): string {
  const toml = readFileSync(join(dir, 'Cargo.toml'), 'utf8');
  const pkg = toml.split(/^\[/m).find((s) => s.startsWith('package]'));
  const m = pkg?.match(/^name\s*=\s*"([^"]+)"/m);
  if (!m) throw new CharmsError('IO', 'Cargo.toml has no [package] name');
  return m[1]!.replace(/-/g, '_');
}

/** Where `app build` leaves the release binary. */
export function releaseWasmPath(dir: string): string {
  return projectKind(dir) === 'rust'
    ? join(dir, 'target', 'wasm32-wasip1', 'release', `${cargoPackageName(dir)}.wasm`)
    : join(dir, 'build', 'app.wasm');
}

function run(cmd: string, args: string[], dir: string, installHint: string, log: (s: string) => void): void {
  log(`running ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { cwd: dir, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT')
    throw new CharmsError('IO', `${cmd} not found: ${installHint}`);
  if (r.status !== 0) throw new CharmsError('IO', `${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
}

/**
 * The AssemblyScript compiler: the project's own (`npm install` in the app), else the one
 * installed with charms-ts, if any.
 */
function findAsc(dir: string): string {
  const own = join(dir, 'node_modules', 'assemblyscript', 'bin', 'asc.js');
  if (existsSync(own)) return own;
  try {
    // the package exports no bin path: locate it from the main entry (dist/assemblyscript.js)
    return fileURLToPath(new URL('../bin/asc.js', import.meta.resolve('assemblyscript')));
  } catch (e) {
    throw new CharmsError('IO', 'AssemblyScript compiler not installed: run `npm install` in the app directory', { cause: e });
  }
}

/** Builds the app in release mode and returns the path of the .wasm. */
export async function buildApp(dir: string, log: (s: string) => void): Promise<string> {
  const kind = projectKind(dir);
  if (kind === 'rust') {
    run(
      'cargo',
      ['build', '--release', '--target', 'wasm32-wasip1'],
      dir,
      'install Rust (https://rustup.rs) and run `rustup target add wasm32-wasip1`',
      log,
    );
  } else {
    const asc = findAsc(dir);
    run(process.execPath, [asc, 'assembly/index.ts', '--target', 'release'], dir, 'run `npm install` in the app directory', log);
  }
  const wasm = releaseWasmPath(dir);
  if (!existsSync(wasm)) throw new CharmsError('IO', `build finished but ${wasm} is missing`);
  return wasm;
}
