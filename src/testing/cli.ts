/** Running the built `charms` program from tests: a server child process and the port it listens on. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built CLI entry point (dist/cli/charms.js). */
export const charmsBin = fileURLToPath(new URL('../cli/charms.js', import.meta.url));

/**
 * Starts `charms <args>` (a server on 127.0.0.1, port 0) and resolves with the child and the port
 * from its "Server running on" line; rejects with its stderr if it exits first.
 */
export function startCliServer(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  nodeArgs: string[] = [],
  bin = charmsBin,
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...nodeArgs, bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env });
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stderr!.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /Server running on 127\.0\.0\.1:(\d+)/.exec(buf);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once('exit', () => reject(new Error(`server exited: ${buf}`)));
  });
}

/**
 * Starts `charms index <args>` (on 127.0.0.1, port 0) and resolves with the child, the port from
 * its "Charms index running on" line and its stderr so far; rejects with its stderr if it exits first.
 */
export function startCliIndex(args: string[]): Promise<{ child: ChildProcess; port: number; stderr: () => string }> {
  const child = spawn(process.execPath, [charmsBin, 'index', '--ip', '127.0.0.1', '--port', '0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let buf = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /Charms index running on 127\.0\.0\.1:(\d+)/.exec(buf);
      if (m) resolve({ child, port: Number(m[1]), stderr: () => buf });
    });
    child.once('exit', () => reject(new Error(`charms index exited: ${buf}`)));
  });
}

/** Runs `charms <args>` to its end (killed after 60 s), with `env` added to this process's environment. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [charmsBin, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.once('exit', (status) => (clearTimeout(guard), resolve({ status, stderr }))));
}

/** SIGTERM to a child, resolved when it has exited (at once if it already has). */
export const stopChild = (c: ChildProcess): Promise<void> =>
  new Promise<void>((resolve) => {
    if (c.exitCode !== null) return resolve();
    c.once('exit', () => resolve());
    c.kill('SIGTERM');
  });
