/**
 * Where the spell-query service gets transactions by id:
 * - Bitcoin Core `getrawtransaction <txid>` through the one node client (bitcoin-node.ts; the node
 *   needs `-txindex` for arbitrary confirmed transactions); RPC error -5 means unknown;
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
import { CharmsError } from '../errors.js';
import type { SourceConfig } from '../settings/settings.js';
import { redactText, withoutCredentials } from '../util/redact.js';
import { SOURCE_ANSWER_LIMIT, readCapped, rpcNodeFromConfig, shownUrl, unreachable, type BitcoinNode } from './bitcoin-node.js';


export interface TxSource {
  readonly name: string;
  /** Raw transaction hex; NOT_FOUND when unknown, UPSTREAM_FAILED / UPSTREAM_UNAVAILABLE when failing / unreachable. */
  rawTx(txid: string): Promise<string>;
}

export class EsploraSource implements TxSource {
  readonly name: string;
  private readonly base: URL;
  private readonly basePath: string;
  private readonly headers: Record<string, string> = {};
  /** `base` may carry credentials (sent as Basic auth) and a query (e.g. `?token=`, kept on every call). */
  constructor(
    base: string,
    private readonly timeoutMs = 10_000,
    private readonly answerLimit = SOURCE_ANSWER_LIMIT,
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
      text = (await readCapped(res, this.name, this.answerLimit)).trim();
    } catch (e) {
      if (e instanceof CharmsError) throw e;
      throw unreachable(this.name, e);
    }
    if (res.status === 404) throw new CharmsError('NOT_FOUND', `transaction ${txid} not found`);
    if (!res.ok) throw new CharmsError('UPSTREAM_FAILED', redactText(`${this.name} answered ${res.status}: ${text.slice(0, 120).replace(/\s+/g, ' ')}`));
    return text;
  }
}

/** Transactions from a Bitcoin Core node (`getrawtransaction`; the node needs `-txindex`). */
export class NodeSource implements TxSource {
  readonly name: string;
  constructor(private readonly node: BitcoinNode) {
    this.name = node.name;
  }
  async rawTx(txid: string): Promise<string> {
    let hex: unknown;
    try {
      hex = await this.node.call('getrawtransaction', [txid]);
    } catch (e) {
      if (e instanceof CharmsError && e.code === 'NOT_FOUND') throw new CharmsError('NOT_FOUND', `transaction ${txid} not found`, { cause: e });
      throw e;
    }
    if (typeof hex !== 'string') throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered without a transaction`);
    return hex;
  }
}

/** Esplora when `esploraUrl` is set, else Bitcoin Core RPC when `rpcUrl` is set, else none. */
export function sourceFromConfig(c: SourceConfig): TxSource | undefined {
  if (c.esploraUrl) return new EsploraSource(c.esploraUrl, c.timeoutMs);
  const node = rpcNodeFromConfig(c);
  return node && new NodeSource(node);
}
