/**
 * Where the spell-query service gets transactions by id:
 * - Bitcoin Core JSON-RPC `getrawtransaction <txid>` (the node needs `-txindex` for arbitrary
 *   confirmed transactions); RPC error -5 means unknown;
 * - an Esplora-compatible REST API (`GET <base>/tx/<txid>/hex`, e.g. mempool.space's `/api`
 *   or blockstream.info's); 404 means unknown.
 *
 * Errors: NOT_FOUND for an unknown transaction; UPSTREAM_UNAVAILABLE (503) when no answer came
 * at all (connection refused, DNS, timeout, unreadable cookie file); UPSTREAM_FAILED (502) when
 * the source answered with a failure.
 *
 * Configuration (`sourceFromConfig` of `Settings.querySource`): `ESPLORA_URL`, or `BITCOIN_RPC_URL` with
 * `BITCOIN_RPC_COOKIE` (path of bitcoind's `.cookie` file, read at every call so node restarts
 * are picked up) or `BITCOIN_RPC_USER` / `BITCOIN_RPC_PASSWORD`.
 */
import { readFileSync } from 'node:fs';
import { CharmsError } from '../errors.js';
import type { SourceConfig } from '../settings/settings.js';
import { redactText, redactUrl, withoutCredentials } from '../util/redact.js';

export interface TxSource {
  readonly name: string;
  /** Raw transaction hex; NOT_FOUND when unknown, UPSTREAM_FAILED / UPSTREAM_UNAVAILABLE when failing / unreachable. */
  rawTx(txid: string): Promise<string>;
}


function unreachable(what: string, e: unknown): CharmsError {
  const inner = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  const reason = inner instanceof Error ? (inner.name === 'TimeoutError' ? 'timed out' : inner.message) : String(inner);
  return new CharmsError('UPSTREAM_UNAVAILABLE', redactText(`${what} is unreachable: ${reason}`), { cause: e });
}

/** A source URL as shown in names and messages: redacted, without a trailing slash. */
const shownUrl = (u: string): string => redactUrl(u).replace(/\/(?=$|\?)/, '');

export class EsploraSource implements TxSource {
  readonly name: string;
  private readonly base: URL;
  private readonly basePath: string;
  private readonly headers: Record<string, string> = {};
  /** `base` may carry credentials (sent as Basic auth) and a query (e.g. `?token=`, kept on every call). */
  constructor(
    base: string,
    private readonly timeoutMs = 10_000,
  ) {
    let parts: ReturnType<typeof withoutCredentials>;
    try {
      parts = withoutCredentials(base);
    } catch {
      throw new CharmsError('CONFIG', `ESPLORA_URL: not a URL: ${redactText(base)}`);
    }
    this.base = new URL(parts.url);
    this.basePath = this.base.pathname.replace(/\/+$/, '');
    if (parts.authorization) this.headers.authorization = parts.authorization;
    this.name = `esplora ${shownUrl(base)}`;
  }
  private urlFor(txid: string): string {
    const u = new URL(this.base);
    u.pathname = `${this.basePath}/tx/${txid}/hex`;
    return u.toString();
  }
  async rawTx(txid: string): Promise<string> {
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.urlFor(txid), { headers: this.headers, signal: AbortSignal.timeout(this.timeoutMs) });
      text = (await res.text()).trim();
    } catch (e) {
      throw unreachable(this.name, e);
    }
    if (res.status === 404) throw new CharmsError('NOT_FOUND', `transaction ${txid} not found`);
    if (!res.ok) throw new CharmsError('UPSTREAM_FAILED', redactText(`${this.name} answered ${res.status}: ${text.slice(0, 120).replace(/\s+/g, ' ')}`));
    return text;
  }
}

export class BitcoinRpcSource implements TxSource {
  readonly name: string;
  /** `auth` returns `user:password` (or undefined for none); it is called for every request. */
  constructor(
    private readonly url: string,
    private readonly auth: () => string | undefined,
    private readonly timeoutMs = 10_000,
  ) {
    this.name = `bitcoind ${shownUrl(url)}`;
  }
  async rawTx(txid: string): Promise<string> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const auth = this.auth();
    if (auth !== undefined) headers.authorization = `Basic ${Buffer.from(auth).toString('base64')}`;
    let res: Response;
    let text: string;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '1.0', id: 'charms', method: 'getrawtransaction', params: [txid] }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await res.text();
    } catch (e) {
      throw unreachable(this.name, e);
    }
    if (res.status === 401 || res.status === 403) throw new CharmsError('UPSTREAM_FAILED', `${this.name} refused the RPC credentials (${res.status})`);
    let body: { result?: unknown; error?: { code?: number; message?: string } | null };
    try {
      body = JSON.parse(text) as typeof body;
    } catch (e) {
      throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered ${res.status} without JSON`, { cause: e });
    }
    if (body.error) {
      if (body.error.code === -5) throw new CharmsError('NOT_FOUND', `transaction ${txid} not found`);
      throw new CharmsError('UPSTREAM_FAILED', redactText(`${this.name} error ${body.error.code}: ${body.error.message}`));
    }
    if (typeof body.result !== 'string') throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered ${res.status} without a transaction`);
    return body.result;
  }
}

/** Esplora when `esploraUrl` is set, else Bitcoin Core RPC when `rpcUrl` is set, else none. */
export function sourceFromConfig(c: SourceConfig): TxSource | undefined {
  if (c.esploraUrl) return new EsploraSource(c.esploraUrl, c.timeoutMs);
  if (!c.rpcUrl) return undefined;
  const { rpcCookie, rpcUser, rpcPassword } = c;
  let url: URL;
  try {
    url = new URL(c.rpcUrl);
  } catch (e) {
    throw new CharmsError('CONFIG', `BITCOIN_RPC_URL: not a URL: ${redactText(c.rpcUrl)}`, { cause: e });
  }
  // credentials in the URL (http://user:pass@host:port) are honoured too
  const inUrl = url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
  url.username = '';
  url.password = '';
  return new BitcoinRpcSource(
    url.toString(),
    () => {
      if (rpcCookie) {
        try {
          return readFileSync(rpcCookie, 'utf8').trim();
        } catch (e) {
          // bitcoind deletes its cookie when it stops: treat as unreachable
          throw new CharmsError('UPSTREAM_UNAVAILABLE', `cannot read the RPC cookie file ${rpcCookie} (is bitcoind running?): ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
        }
      }
      if (rpcUser !== undefined) return `${rpcUser}:${rpcPassword ?? ''}`;
      return inUrl;
    },
    c.timeoutMs,
  );
}
