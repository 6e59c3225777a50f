/**
 * A throwaway PostgreSQL server for tests: initdb into a temporary directory owned by the
 * `postgres` user (initdb and postgres refuse to run as root), started on a free loopback port,
 * stopped by its PID. The Debian packages put the binaries in /usr/lib/postgresql/<major>/bin.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The newest /usr/lib/postgresql/<major>/bin with initdb, or undefined. */
function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((d) => /^\d+$/.test(d))
    .sort((a, b) => Number(b) - Number(a));
  return majors.map((m) => join(root, m, 'bin')).find((b) => existsSync(join(b, 'initdb')) && existsSync(join(b, 'postgres')));
}

const isRoot = (): boolean => process.getuid?.() === 0;

function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return isRoot() ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });

export interface TestPostgres {
  url: string;
  /** A fresh database on this server, by name. */
  createDb(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** Starts a server (about 1–3 s); undefined when PostgreSQL is not installed. */
export async function startPostgres(): Promise<TestPostgres | undefined> {
  const bin = postgresBin();
  if (!bin) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'charms-pg-'));
  if (isRoot()) {
    const pw = spawnSync('id', ['-u', 'postgres']);
    const gw = spawnSync('id', ['-g', 'postgres']);
    if (pw.status !== 0) return undefined;
    chownSync(dir, Number(String(pw.stdout).trim()), Number(String(gw.stdout).trim()));
  }
  const data = join(dir, 'data');
  const [c, a] = asPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const init = spawnSync(c, a, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const [pc, pa] = asPostgres(join(bin, 'postgres'), ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off']);
  const proc: ChildProcess = spawn(pc, pa, { stdio: 'ignore' });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const { default: pg } = await import('pg');
  for (let i = 0; ; i++) {
    const c2 = new pg.Client({ connectionString: url });
    try {
      await c2.connect();
      await c2.end();
      break;
    } catch {
      await c2.end().catch(() => {});
      if (i >= 200 || proc.exitCode !== null) throw new Error('PostgreSQL did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    async createDb(name) {
      const c3 = new pg.Client({ connectionString: url });
      await c3.connect();
      await c3.query(`CREATE DATABASE "${name}"`);
      await c3.end();
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        // the postmaster's own PID (runuser is its parent); SIGINT is PostgreSQL's fast shutdown
        let pid = proc.pid;
        try {
          pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
        } catch {
          /* not written yet: stop runuser's child through runuser */
        }
        if (pid !== undefined) process.kill(pid, 'SIGINT');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (proc.exitCode === null && pid !== undefined) process.kill(pid, 'SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
