/**
 * The one HTTP client of an Esplora-compatible REST API (Blockstream's electrs, mempool.space's
 * `/api`): base URL with optional credentials (sent as Basic auth) and query (e.g. `?token=`, kept
 * on every call), a timeout per request, and a byte limit per answer read while it streams in.
 *
 * Errors: UPSTREAM_UNAVAILABLE when no answer came; UPSTREAM_FAILED for an answer over its limit or
 * (from `expectOk`) a failure status. A 404 is returned to the caller, who knows what it means.
 */
import { CharmsError } from '../errors.js';
import { redactText, withoutCredentials } from '../util/redact.js';
import { SOURCE_ANSWER_LIMIT, fetchRead, readCappedBytes, shownUrl, unreachable } from './bitcoin-node.js';

export interface EsploraAnswer {
  status: number;
  ok: boolean;
  bytes: Uint8Array;
  /** The body as trimmed UTF-8 text. */
  text(): string;
}

export interface EsploraRequest {
  method?: 'GET' | 'POST';
  body?: string;
  /** Byte limit of this answer (default SOURCE_ANSWER_LIMIT). */
  limit?: number;
  /** What a larger answer would be, for the message ("larger than any block"). */
  larger?: string;
}

export class EsploraClient {
  readonly name: string;
  private readonly base: URL;
  private readonly basePath: string;
  private readonly headers: Record<string, string> = {};
  constructor(
    base: string,
    readonly timeoutMs = 10_000,
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

  urlFor(path: string): string {
    const u = new URL(this.base);
    u.pathname = `${this.basePath}${path}`;
    return u.toString();
  }

  async request(path: string, o: EsploraRequest = {}): Promise<EsploraAnswer> {
    let res: Response;
    let bytes: Uint8Array;
    try {
      res = await (o.method === undefined || o.method === 'GET' ? fetchRead : fetch)(this.urlFor(path), {
        method: o.method ?? 'GET',
        headers: o.body === undefined ? this.headers : { ...this.headers, 'content-type': 'text/plain' },
        ...(o.body === undefined ? {} : { body: o.body }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      bytes = await readCappedBytes(res, this.name, o.limit ?? SOURCE_ANSWER_LIMIT, o.larger);
    } catch (e) {
      if (e instanceof CharmsError) throw e;
      throw unreachable(this.name, e);
    }
    return { status: res.status, ok: res.ok, bytes, text: () => Buffer.from(bytes).toString('utf8').trim() };
  }

  /** UPSTREAM_FAILED naming the status and the start of the body, unless the answer is a success. */
  expectOk(a: EsploraAnswer): EsploraAnswer {
    if (!a.ok) throw new CharmsError('UPSTREAM_FAILED', redactText(`${this.name} answered ${a.status}: ${a.text().slice(0, 120).replace(/\s+/g, ' ')}`));
    return a;
  }

  /** A JSON answer (404 → undefined); UPSTREAM_FAILED for anything that is not JSON. */
  async json(path: string, o: EsploraRequest = {}): Promise<unknown> {
    const a = await this.request(path, o);
    if (a.status === 404) return undefined;
    this.expectOk(a);
    try {
      return JSON.parse(a.text()) as unknown;
    } catch (e) {
      throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered ${path} without JSON`, { cause: e });
    }
  }
}
