/**
 * The spell-query service: `GET /spells/<txid>` (transaction from the configured source) and
 * `PUT /spells/<txid>` with `{tx_hex}` (need not be broadcast). 200 with the spell, 204 when the
 * transaction carries no valid spell, 400 bad txid/hex/mismatch, 404 unknown transaction,
 * 502/503 when the source fails or is unreachable; errors as JSON `{error, code}`. Answers are
 * cached by txid (they never change) and concurrent requests share one upstream call.
 */
import { createHash } from 'node:crypto';
import { CharmsError } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import { parseJson, toJsonCompact } from '../codec/json.js';
import { ValueMap } from '../codec/value.js';
import { parseTx, txidHex } from '../bitcoin/tx.js';
import { extractAndVerifySpell } from '../verify/index.js';
import { jsonError, listenDual, type Listening, type Req, type Res } from '../services/http.js';
import { MemoryCache, type ProofCache } from '../services/cache.js';
import { silentLogger, type Logger } from '../services/log.js';
import { errorResponse } from '../services/prove-server.js';
import { spellQueryValue } from './shape.js';
import type { TxSource } from './sources.js';
import { WALLET_PAGE } from './wallet-page.js';

const NO_SPELL = Uint8Array.of(0);
const TXID = /^[0-9a-fA-F]{64}$/;

export interface QueryServiceOptions {
  source?: TxSource;
  cache?: ProofCache;
  mock?: boolean;
  log?: Logger;
}

/** The answer for a transaction: JSON bytes of the response, or NO_SPELL. */
export function answerFor(txHex: string, mock: boolean): Uint8Array {
  try {
    const spell = extractAndVerifySpell({ bitcoin: txHex }, mock);
    return new TextEncoder().encode(toJsonCompact(spellQueryValue(spell)));
  } catch (e) {
    if (e instanceof CharmsError && e.code === 'INVALID_TX') throw e;
    return NO_SPELL;
  }
}

function respond(req: Req, answer: Uint8Array, cacheable: boolean): Res {
  const etag = `"${createHash('sha256').update(answer).digest('hex').slice(0, 32)}"`;
  const headers: Record<string, string> = { etag, 'cache-control': cacheable ? 'public, max-age=86400' : 'no-cache' };
  if (req.headers['if-none-match'] === etag) return { status: 304, headers };
  if (answer.length === 1 && answer[0] === 0) return { status: 204, headers };
  return { status: 200, headers: { ...headers, 'content-type': 'application/json' }, body: answer };
}

export function queryHandler(o: QueryServiceOptions) {
  const cache = o.cache ?? new MemoryCache(10_000);
  const log = o.log ?? silentLogger;
  const mock = o.mock ?? false;
  return async (req: Req): Promise<Res> => {
    try {
      if (req.method === 'GET' && (req.path === '/' || req.path === '/wallet'))
        return { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: WALLET_PAGE };
      const m = /^\/spells\/([^/]+)$/.exec(req.path);
      if (!m) return jsonError(404, 'NOT_FOUND', `no route for ${req.method} ${req.path}`);
      const txid = m[1]!;
      if (!TXID.test(txid)) return jsonError(400, 'INVALID_INPUT', 'txid: expected 64 hex characters');
      const id = txid.toLowerCase();
      if (req.method === 'GET') {
        const source = o.source;
        if (!source) return jsonError(503, 'UPSTREAM_UNAVAILABLE', 'no transaction source configured (set ESPLORA_URL or BITCOIN_RPC_URL); use PUT with the transaction');
        const answer = await cache.getOrCompute(`q:${mock ? 'm' : 'r'}:${id}`, async () => {
          const hex = await source.rawTx(id);
          return answerFor(hex, mock);
        });
        return respond(req, answer, true);
      }
      if (req.method === 'PUT') {
        let body;
        try {
          body = parseJson(new TextDecoder().decode(await req.body(8 * 1024 * 1024)));
        } catch (e) {
          if (e instanceof CharmsError && e.code === 'PAYLOAD_TOO_LARGE') throw e;
          return jsonError(400, 'INVALID_INPUT', `body must be JSON {"tx_hex": "<hex>"}: ${(e as Error).message}`);
        }
        const hex = body instanceof ValueMap ? body.get('tx_hex') : undefined;
        if (typeof hex !== 'string') return jsonError(400, 'INVALID_INPUT', 'body must be JSON {"tx_hex": "<hex>"}');
        const tx = parseTx(fromHex(hex, 'tx_hex'));
        if (txidHex(tx) !== id) return jsonError(400, 'INVALID_INPUT', `tx_hex is transaction ${txidHex(tx)}, not ${id}`);
        return respond(req, answerFor(hex, mock), false);
      }
      return jsonError(405, 'INVALID_INPUT', `method ${req.method} not allowed`);
    } catch (e) {
      if (e instanceof CharmsError && e.code === 'UPSTREAM_UNAVAILABLE') {
        const unreachable = /unreachable/.test(e.message);
        log.warn('transaction source failed', { error: e.message });
        return jsonError(unreachable ? 503 : 502, e.code, e.message);
      }
      if (e instanceof CharmsError && e.code === 'INVALID_TX') return jsonError(400, e.code, e.message);
      return errorResponse(e, log);
    }
  };
}

export function startQueryServer(o: QueryServiceOptions & { host?: string; port?: number }): Promise<Listening> {
  return listenDual(queryHandler(o), { host: o.host ?? '0.0.0.0', port: o.port ?? 17785 });
}
