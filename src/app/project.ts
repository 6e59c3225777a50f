/**
 * App projects: detect the kind (Rust/Cargo or AssemblyScript), build to wasm32-wasip1, and find
 * the release binary.
 */
import { existsSync, realpathSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { CharmsError } from '../errors.js';

type ProjectKind = 'rust' | 'assemblyscript';

function projectKind(dir: string): ProjectKind {
  if (existsSync(join(dir, 'asconfig.json'))) return 'assemblyscript';
  if (existsSync(join(dir, 'Cargo.toml'))) return 'rust';
  throw new CharmsError('IO', `${dir} is not an app project (no Cargo.toml or asconfig.json): run this in an app directory`);
}

/** What `cargo metadata` says about the package in `dir`: its target directory and binary name. */
interface CargoBinary {
  workspaceRoot: string;
  targetDir: string;
  binName: string;
}

/**
 * Asks cargo (not a guess from Cargo.toml): the workspace's target directory and the name of the
 * package's binary target. Cargo keeps hyphens in binary names (`my-token` → `my-token.wasm`).
 */
function cargoBinary(dir: string): CargoBinary {
  const r = spawnSync('cargo', ['metadata', '--format-version', '1', '--no-deps', '--offline'], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT')
    throw new CharmsError('IO', 'cargo not found: install Rust (https://rustup.rs) and run `rustup target add wasm32-wasip1`');
  if (r.status !== 0) throw new CharmsError('IO', `cargo metadata failed in ${dir}: ${r.stderr.trim().split('\n').pop() ?? ''}`);
  const meta = JSON.parse(r.stdout) as {
    target_directory: string;
    workspace_root: string;
    packages: { name: string; manifest_path: string; targets: { name: string; kind: string[] }[] }[];
  };
  const manifest = realpathSync(join(dir, 'Cargo.toml'));
  const pkg = meta.packages.find((p) => existsSync(p.manifest_path) && realpathSync(p.manifest_path) === manifest);
  if (!pkg) throw new CharmsError('IO', `${dir}/Cargo.toml is a virtual manifest: run this in the app's package directory`);
  const bins = pkg.targets.filter((t) => t.kind.includes('bin'));
  if (bins.length > 1)
    throw new CharmsError(
      'IO',
      `package ${pkg.name} has ${bins.length} binary targets (${bins.map((b) => b.name).join(', ')}): an app has one; pass --bin <path>`,
    );
  return { workspaceRoot: meta.workspace_root, targetDir: meta.target_directory, binName: bins[0]?.name ?? pkg.name };
}

/** Where `app build` leaves the release binary. */
export function releaseWasmPath(dir: string): string {
  if (projectKind(dir) === 'assemblyscript') return join(dir, 'build', 'app.wasm');
  const { targetDir, binName } = cargoBinary(dir);
  return join(targetDir, 'wasm32-wasip1', 'release', `${binName}.wasm`);
}

/** Runs a build tool; its output (stdout too) goes to stderr: stdout carries only the result. */
function run(cmd: string, args: string[], dir: string, installHint: string, log: (s: string) => void): void {
  log(`running ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { cwd: dir, stdio: ['ignore', process.stderr, process.stderr] });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') throw new CharmsError('IO', `${cmd} not found: ${installHint}`);
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
    // resolved as a plain file of the package (its exports map "./*" to the files)
    return createRequire(import.meta.url).resolve('assemblyscript/bin/asc.js');
  } catch (e) {
    throw new CharmsError('IO', 'AssemblyScript compiler not installed: run `npm install` in the app directory', { cause: e });
  }
}

/** Builds the app in release mode and returns the path of the .wasm. */
export async function buildApp(dir: string, log: (s: string) => void): Promise<string> {
  const kind = projectKind(dir);
  if (kind === 'rust') {
    const hint = 'install Rust (https://rustup.rs) and run `rustup target add wasm32-wasip1`';
    // As the reference: a locked build. A fresh app has no Cargo.lock yet: create it once (commit it).
    if (!existsSync(join(cargoBinary(dir).workspaceRoot, 'Cargo.lock'))) {
      log('no Cargo.lock: creating it with `cargo generate-lockfile` (commit it for reproducible builds)\n');
      run('cargo', ['generate-lockfile'], dir, hint, log);
    }
    run('cargo', ['build', '--locked', '--release', '--target=wasm32-wasip1'], dir, hint, log);
  } else {
    const asc = findAsc(dir);
    run(process.execPath, [asc, 'assembly/index.ts', '--target', 'release'], dir, 'run `npm install` in the app directory', log);
  }
  const wasm = releaseWasmPath(dir);
  if (!existsSync(wasm)) throw new CharmsError('IO', `build finished but ${wasm} is missing`);
  return wasm;
}
