/**
 * Commands for the container test, each bounded in time: podman (always with `--runtime runc`,
 * the runtime this machine kind runs containers with) and whatever else the test runs
 * (debootstrap, npm, tar, podman-compose).
 */
import { spawn } from 'node:child_process';

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `cmd args`, killing it (SIGKILL, its process group) after `timeoutMs`; rejects on a
 * non-zero exit unless `allowFail`. `env` is added to this process's environment.
 */
export function run(
  cmd: string,
  args: string[],
  o: { timeoutMs: number; allowFail?: boolean; env?: Record<string, string>; cwd?: string; stdin?: 'ignore' | 'inherit'; echo?: boolean },
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      stdio: [o.stdin ?? 'ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...o.env },
      ...(o.cwd ? { cwd: o.cwd } : {}),
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c;
      if (o.echo) process.stderr.write(c);
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c;
      if (o.echo) process.stderr.write(c);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, o.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = `${cmd} ${args.join(' ')}`.slice(0, 300);
      if (timedOut) reject(new Error(`${line}: killed after ${o.timeoutMs} ms\n${stderr.slice(-4000)}`));
      else if (code !== 0 && !o.allowFail) reject(new Error(`${line}: exit ${code}\n${stdout.slice(-2000)}\n${stderr.slice(-4000)}`));
      else resolve({ code, stdout, stderr });
    });
  });
}

/** `podman --runtime runc …`. */
export const podman = (args: string[], o: { timeoutMs?: number; allowFail?: boolean; echo?: boolean } = {}): Promise<Ran> =>
  run('podman', ['--runtime', 'runc', ...args], { timeoutMs: o.timeoutMs ?? 60_000, allowFail: o.allowFail ?? false, echo: o.echo ?? false });

/** The limits containers run with here: podman's defaults (the host's hard limits) are refused. */
export const ULIMITS = ['--ulimit', 'nofile=16384:16384', '--ulimit', 'nproc=32768:32768'];
