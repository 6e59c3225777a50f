/** A bounded loopback load loop: N concurrent keep-alive clients for a fixed number of requests. */
import http from 'node:http';

export async function load(o: {
  port: number;
  method: string;
  path: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  concurrency: number;
  requests: number;
}) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.concurrency });
  const lat: number[] = [];
  let next = 0;
  let errors = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < o.requests) {
      next++;
      const s = performance.now();
      await new Promise<void>((resolve) => {
        const req = http.request({ host: '127.0.0.1', port: o.port, method: o.method, path: o.path, headers: o.headers, agent }, (res) => {
          if ((res.statusCode ?? 500) >= 400) errors++;
          res.resume();
          res.on('end', () => resolve());
        });
        req.on('error', () => (errors++, resolve()));
        req.end(o.body);
      });
      lat.push(performance.now() - s);
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  const secs = (performance.now() - t0) / 1000;
  agent.destroy();
  lat.sort((a, b) => a - b);
  const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor(lat.length * p))]!;
  return { rps: o.requests / secs, p50: pct(0.5), p99: pct(0.99), errors };
}
