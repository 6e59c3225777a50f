/**
 * Where the spell-query service gets transactions: Bitcoin Core JSON-RPC (`getrawtransaction`)
 * or an Esplora-compatible REST API (`GET /tx/<txid>/hex`).
 *
 * Configuration (environment): `ESPLORA_URL`, or `BITCOIN_RPC_URL` with `BITCOIN_RPC_COOKIE`
 * (a cookie file) or `BITCOIN_RPC_USER` / `BITCOIN_RPC_PASSWORD`.
 */
import { readFileSync } from 'node:fs';
import { CharmsError } from '../errors.js';

export interface TxSource {
  readonly name: string;
  /** Raw transaction hex; NOT_FOUND when unknown, UPSTREAM_UNAVAILABLE when unreachable. */
  rawTx(txid: string): Promise<string>;
}

const unreachable = (what: string, e: unknown) =>
  new CharmsError('UPSTREAM_UNAVAILABLE', `${what} is unreachable: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}`);

export class EsploraSource implements TxSource {
  readonly name: string;
  constructor(private readonly base: string) {
    this.name = `esplora ${base}`;
  }
  async rawTx(txid: string): Promise<string> {
    let res: Response;
    try {
      res = await fetch(`${this.base.replace(/\/$/, '')}/tx/${txid}/hex`, { signal: AbortSignal.timeout(10_000) });
    } catch (e) {
      throw unreachable('the transaction source', e);
    }
    const text = (await res.text()).trim();
    if (res.status === 404 || res.status === 400) throw new CharmsError('NOT_FOUND', `transaction ${txid} not found`);
    if (!res.ok) throw new CharmsError('UPSTREAM_UNAVAILABLE', `transaction source answered ${res.status}`);
    return text;
  }
}

export class BitcoinRpcSource implements TxSource {
  readonly name: string;
  constructor(
    private readonly url: string,
    private readonly auth: () => string | undefined,
  ) {
    this.name = `bitcoind ${new URL(url).host}`;
  }
  async rawTx(txid: string): Promise<string> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const auth = this.auth();
    if (auth) headers.authorization = `Basic ${Buffer.from(auth).toString('base64')}`;
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '1.0', id: 'charms', method: 'getrawtransaction', params: [txid] }),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (e) {
      throw unreachable('bitcoind', e);
    }
    let body: { result?: string; error?: { code: number; message: string } | null };
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new CharmsError('UPSTREAM_UNAVAILABLE', `bitcoind answered ${res.status} without JSON`);
    }
    if (body.error) {
      if (body.error.code === -5) throw new CharmsError('NOT_FOUND', `transaction ${txid} not found`);
      throw new CharmsError('UPSTREAM_UNAVAILABLE', `bitcoind error ${body.error.code}: ${body.error.message}`);
    }
    if (typeof body.result !== 'string') throw new CharmsError('UPSTREAM_UNAVAILABLE', `bitcoind answered ${res.status}`);
    return body.result;
  }
}

export function sourceFromEnv(env: Record<string, string | undefined>): TxSource | undefined {
  if (env.ESPLORA_URL) return new EsploraSource(env.ESPLORA_URL);
  if (env.BITCOIN_RPC_URL) {
    const cookie = env.BITCOIN_RPC_COOKIE;
    const user = env.BITCOIN_RPC_USER;
    const pass = env.BITCOIN_RPC_PASSWORD;
    return new BitcoinRpcSource(env.BITCOIN_RPC_URL, () => {
      if (cookie) {
        try {
          return readFileSync(cookie, 'utf8').trim();
        } catch (e) {
          throw new CharmsError('CONFIG', `cannot read BITCOIN_RPC_COOKIE ${cookie}: ${(e as Error).message}`);
        }
      }
      return user !== undefined ? `${user}:${pass ?? ''}` : undefined;
    });
  }
  return undefined;
}
