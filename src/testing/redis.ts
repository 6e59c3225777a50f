/** A throwaway redis-server on a free loopback port, for tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { Redis } from 'ioredis';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });

export async function startRedis(): Promise<{ url: string; proc: ChildProcess; port: number }> {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  const c = new Redis(url, { maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
  c.on('error', () => {});
  let up = false;
  try {
    for (let i = 0; i < 200 && !up; i++) {
      try {
        if (c.status !== 'ready') await c.connect();
        up = (await c.ping()) === 'PONG';
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } finally {
    c.disconnect();
  }
  if (!up) {
    proc.kill('SIGKILL');
    throw new Error(`redis-server on port ${port} did not answer PING within 10 s`);
  }
  return { url, proc, port };
}
