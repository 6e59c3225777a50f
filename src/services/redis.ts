/**
 * A minimal Redis (RESP2) client: the handful of commands the caches need, binary-safe, one
 * connection with pipelined replies, connect/command timeouts, and reconnect on the next call
 * after a failure. (A full client would be a large dependency for six commands.)
 */
import net from 'node:net';
import { CharmsError } from '../errors.js';

type Reply = Buffer | string | number | null | Reply[] | Error;

export class RedisClient {
  private socket: net.Socket | undefined;
  private connecting: Promise<net.Socket> | undefined;
  private pending: { resolve: (r: Reply) => void; reject: (e: Error) => void }[] = [];
  private buf: Buffer = Buffer.alloc(0);
  private readonly host: string;
  private readonly port: number;
  private readonly password: string | undefined;
  private readonly username: string | undefined;
  private readonly db: number;

  constructor(
    url: string,
    private readonly timeoutMs = 2000,
  ) {
    const u = new URL(url);
    if (u.protocol !== 'redis:') throw new CharmsError('CONFIG', `CACHE_URL must be a redis:// URL, got ${u.protocol}`);
    this.host = u.hostname || '127.0.0.1';
    this.port = Number(u.port || 6379);
    this.password = u.password ? decodeURIComponent(u.password) : undefined;
    this.username = u.username ? decodeURIComponent(u.username) : undefined;
    this.db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
  }

  private fail(e: Error): void {
    const p = this.pending;
    this.pending = [];
    for (const x of p) x.reject(e);
    this.socket?.destroy();
    this.socket = undefined;
    this.buf = Buffer.alloc(0);
  }

  private connect(): Promise<net.Socket> {
    if (this.socket) return Promise.resolve(this.socket);
    this.connecting ??= new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect({ host: this.host, port: this.port });
      s.setNoDelay(true);
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`redis: connect timeout to ${this.host}:${this.port}`));
      }, this.timeoutMs);
      s.once('connect', async () => {
        clearTimeout(timer);
        this.socket = s;
        s.on('data', (d) => this.onData(d));
        s.on('error', (e) => this.fail(e));
        s.on('close', () => this.fail(new Error('redis: connection closed')));
        try {
          if (this.password) await this.send(this.username ? ['AUTH', this.username, this.password] : ['AUTH', this.password]);
          if (this.db) await this.send(['SELECT', String(this.db)]);
          resolve(s);
        } catch (e) {
          reject(e as Error);
        }
      });
      s.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    }).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    for (;;) {
      const r = parseReply(this.buf, 0);
      if (!r) return;
      this.buf = this.buf.subarray(r.end);
      const p = this.pending.shift();
      if (p) r.value instanceof Error ? p.reject(r.value) : p.resolve(r.value);
    }
  }

  private send(args: (string | Uint8Array)[]): Promise<Reply> {
    const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
    for (const a of args) {
      const b = typeof a === 'string' ? Buffer.from(a) : Buffer.from(a);
      parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error('redis: command timeout'));
        this.fail(new Error('redis: command timeout'));
      }, this.timeoutMs);
      this.pending.push({
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.socket!.write(Buffer.concat(parts));
    });
  }

  async command(...args: (string | Uint8Array)[]): Promise<Reply> {
    await this.connect();
    return this.send(args);
  }

  async get(key: string): Promise<Buffer | null> {
    const r = await this.command('GET', key);
    return r === null ? null : (r as Buffer);
  }

  close(): void {
    this.fail(new Error('redis: closed'));
  }
}

function parseReply(b: Buffer, at: number): { value: Reply; end: number } | undefined {
  const eol = b.indexOf('\r\n', at);
  if (eol < 0) return undefined;
  const line = b.subarray(at + 1, eol).toString();
  switch (String.fromCharCode(b[at]!)) {
    case '+':
      return { value: line, end: eol + 2 };
    case '-':
      return { value: new Error(`redis: ${line}`), end: eol + 2 };
    case ':':
      return { value: Number(line), end: eol + 2 };
    case '$': {
      const n = Number(line);
      if (n < 0) return { value: null, end: eol + 2 };
      if (b.length < eol + 2 + n + 2) return undefined;
      return { value: Buffer.from(b.subarray(eol + 2, eol + 2 + n)), end: eol + 2 + n + 2 };
    }
    case '*': {
      const n = Number(line);
      if (n < 0) return { value: null, end: eol + 2 };
      const items: Reply[] = [];
      let pos = eol + 2;
      for (let i = 0; i < n; i++) {
        const r = parseReply(b, pos);
        if (!r) return undefined;
        items.push(r.value);
        pos = r.end;
      }
      return { value: items, end: pos };
    }
    default:
      throw new Error('redis: protocol error');
  }
}
