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
