/**
 * The spell-query service.
 *
 * - `GET /spells/<txid>`: the transaction comes from the configured source (Bitcoin Core RPC or
 *   Esplora); the source's answer is checked to be that transaction.
 * - `PUT /spells/<txid>` with JSON `{"tx_hex": "<hex>"}`: any Bitcoin or Cardano transaction,
 *   broadcast or not; its id must be `<txid>`.
 *
 * Status: 200 with the spell-query JSON (see shape.ts); 204 when the transaction carries no valid
 * spell (the former service's choice); 400 bad txid / hex / body / id mismatch; 404 unknown
 * transaction; 502 the source failed; 503 the source is unreachable or not configured. Error
 * bodies are JSON `{error, code}`. Mock spells count only when the service runs in mock mode.
 *
 * GET answers are a pure function of the transaction, so they are cached by txid (in-process LRU,
 * or Redis through the cache module) and concurrent requests for one txid share one upstream call.
 * PUT answers are not cached: a txid does not cover witness data, so a PUT body with a stripped
 * witness must not be able to replace the answer other clients get. Responses carry an `ETag`
 * (answered with 304 on `If-None-Match`) and `Cache-Control`.
 */
import { createHash } from 'node:crypto';
import { CharmsError, HTTP_STATUS } from '../errors.js';
import { fromHex } from '../util/bytes.js';
import { ValueMap } from '../codec/value.js';
import { parseTx } from '../bitcoin/tx.js';
import { identifyTx } from '../chains/detect.js';
import { tagTx, untagTx } from '../chains/tagged.js';
import { isNoSpell as noValidSpell, spellOrNone, verifySpells, type SpellVerdict, type TaggedTx } from '../verify/index.js';
import { SpellBatcher, type BatchVerify } from '../verify/batcher.js';
import type { NormalizedSpell } from '../model/spell.js';
import { errorResponse, jsonError, listenDual, readJsonBody, type Handler, type Listening, type Req, type Res } from '../infra/http.js';
import { DEFAULT_CACHE_BYTES, MemoryCache, type ResponseCache } from '../infra/cache.js';
import { silentLogger, type Logger } from '../infra/log.js';
import type { ServerLimits } from '../settings/limits.js';
import { spellQueryJson } from './shape.js';
import { fetchCheckedTx, type TxSource } from '../sources/tx-sources.js';
import { enableMetrics, metricsResponse, requestObserver } from '../infra/metrics-http.js';
import { cacheHitBytes, cacheHits, cacheMissBytes, cacheMisses } from '../util/metrics.js';
import { WALLET_PAGE, WALLET_PAGE_CSP } from './wallet-page.js';

const DEFAULT_QUERY_PORT = 17785;
/** Largest PUT body: a 4 MB transaction as hex, plus room. */
const PUT_BODY_LIMIT = 9 * 1024 * 1024;
/** Cache-Control for spells (immutable: a transaction's spell never changes) and for "no spell". */
const CACHE_SPELL = 'public, max-age=31536000, immutable';
const CACHE_NO_SPELL = 'public, max-age=3600';

/** The cached marker for "no valid spell" (a JSON answer is never a single NUL byte). */
const NO_SPELL = Uint8Array.of(0);
const isNoSpellAnswer = (a: Uint8Array): boolean => a.length === 1 && a[0] === 0;
const TXID = /^[0-9a-fA-F]{64}$/;
const enc = new TextEncoder();

export interface QueryServiceOptions {
  /** Where GET finds transactions; without one, GET answers 503 and only PUT works. */
  source?: TxSource | undefined;
  /** Default: an in-process LRU of at most 10 000 answers and DEFAULT_CACHE_BYTES. */
  cache?: ResponseCache | undefined;
  /** Accept mock proofs. */
  mock?: boolean | undefined;
  log?: Logger | undefined;
  /** `GET /metrics` on this port (default) or not (`off`: none, or served by a listener of its own). */
  metrics?: 'public' | 'off' | undefined;
  /**
   * Bitcoin transactions verified off the event loop (`charms index`: its spell verification
   * threads): per raw transaction its verified spell, or undefined for no valid spell. Absent:
   * everything is verified on the event loop.
   */
  verifyOffThread?: ((raws: Uint8Array[]) => Promise<(NormalizedSpell | undefined)[]>) | undefined;
}

/** The route label of a path (bounded: a txid is never a label). */
function queryRoute(path: string): string {
  if (path === '/' || path === '/wallet' || path === '/wallet/') return '/';
  if (path === '/ready' || path === '/metrics') return path;
  return /^\/spells\/[^/]*\/?$/.test(path) ? '/spells/:txid' : 'other';
}

/**
 * The answer for a transaction: the spell-query JSON bytes, or the "no spell" marker. Throws only
 * for a transaction that cannot be parsed (INVALID_TX) or an internal failure.
 */
export function answerFor(tx: TaggedTx, mock: boolean): Uint8Array {
  const spell = spellOrNone(tx, mock);
  return spell === undefined ? NO_SPELL : enc.encode(spellQueryJson(spell));
}

/** answerFor for a verdict of verifySpells (the same "no spell" rule, isNoSpell). */
function answerOf(v: SpellVerdict): Uint8Array {
  if (v.ok) return enc.encode(spellQueryJson(v.spell));
  if (noValidSpell(v.error)) return NO_SPELL;
  throw v.error;
}

/**
 * Verdicts with the Bitcoin transactions' spells verified by `offThread` (the proofs' pairing work
 * off the event loop). A transaction it finds without a valid spell is verified again here for
 * the exact verdict (no spell, or a real error such as an unreadable transaction), as are Cardano
 * transactions: nearly all of those fail before any pairing work. When the threads are busy
 * (SERVER_BUSY), the batch is verified here, as without threads.
 */
function offThreadVerdicts(offThread: (raws: Uint8Array[]) => Promise<(NormalizedSpell | undefined)[]>, mock: boolean): BatchVerify {
  return async (txs) => {
    const out: (SpellVerdict | undefined)[] = txs.map(() => undefined);
    const btc = txs.flatMap((t, i) => {
      if (!('bitcoin' in t)) return [];
      try {
        return [{ i, raw: untagTx(t).bytes }];
      } catch {
        return []; // not hex: verified here, for the error the caller gets
      }
    });
    try {
      const spells = btc.length ? await offThread(btc.map((b) => b.raw)) : [];
      btc.forEach((b, k) => {
        const spell = spells[k];
        if (spell) out[b.i] = { ok: true, spell };
      });
    } catch (e) {
      if (!(e instanceof CharmsError && e.code === 'SERVER_BUSY')) throw e;
    }
    const here = txs.flatMap((_, i) => (out[i] ? [] : [i]));
    verifySpells(
      here.map((i) => txs[i]!),
      mock,
    ).forEach((v, k) => (out[here[k]!] = v));
    return out as SpellVerdict[];
  };
}

const etags = new WeakMap<Uint8Array, string>();
/** A strong validator from the answer bytes (remembered per cached answer). */
function etagOf(answer: Uint8Array): string {
  let e = etags.get(answer);
  if (e === undefined) {
    e = `"${createHash('sha256').update(answer).digest('base64url').slice(0, 27)}"`;
    etags.set(answer, e);
  }
  return e;
}

/** true when an If-None-Match header value (a list, possibly weak, or `*`) matches `etag`. */
function matches(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const list = (Array.isArray(header) ? header.join(',') : header).split(',').map((t) => t.trim().replace(/^W\//, ''));
  return list.includes('*') || list.includes(etag);
}

function respond(req: Req, answer: Uint8Array, cacheControl: { spell: string; none: string }): Res {
  const etag = etagOf(answer);
  const none = isNoSpellAnswer(answer);
  const headers: Record<string, string> = { etag, 'cache-control': none ? cacheControl.none : cacheControl.spell };
  if (matches(req.headers['if-none-match'], etag)) return { status: 304, headers };
  if (none) return { status: 204, headers };
  return { status: 200, headers: { ...headers, 'content-type': 'application/json' }, body: answer };
}

/** Error answers are never cached. */
const noStore = (r: Res): Res => ({ ...r, headers: { ...r.headers, 'cache-control': 'no-store' } });

/** An answer that must not be cached (thrown through the cache, which keeps only results). */
class UncachedAnswer extends Error {
  constructor(readonly answer: Uint8Array) {
    super('uncached answer');
  }
}

const BODY_HELP = 'body must be JSON {"tx_hex": "<raw transaction hex>"}';

/** The request handler (routes: `/` and `/wallet` the wallet page, `/ready`, `/spells/<txid>`). */
export function queryHandler(o: QueryServiceOptions = {}): Handler {
  const cache = o.cache ?? new MemoryCache({ maxEntries: 10_000, maxBytes: DEFAULT_CACHE_BYTES });
  const log = o.log ?? silentLogger;
  const mock = o.mock ?? false;
  const source = o.source;
  // concurrent requests are verified together (one random-linear-combination pairing check)
  const batcher = new SpellBatcher(mock, undefined, o.verifyOffThread && offThreadVerdicts(o.verifyOffThread, mock));
  const answer = async (tx: TaggedTx): Promise<Uint8Array> => answerOf(await batcher.verify(tx));

  const fromSource = async (id: string): Promise<Uint8Array> => {
    const { hex, bytes } = await fetchCheckedTx(source!, id);
    const witnessless = parseTx(bytes).inputs.every((i) => i.witness.length === 0);
    log.debug('fetched transaction', { txid: id, bytes: bytes.length });
    const a = await answer({ bitcoin: hex });
    // The txid does not cover witnesses: a source that stripped them would make a spell look
    // absent, so "no spell" for a transaction without witnesses is answered but never cached.
    if (witnessless && isNoSpellAnswer(a)) throw new UncachedAnswer(a);
    return a;
  };

  return async (req: Req): Promise<Res> => {
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    try {
      if (method === 'GET' && (req.path === '/' || req.path === '/wallet' || req.path === '/wallet/'))
        return {
          status: 200,
          headers: {
            'content-type': 'text/html; charset=utf-8',
            'cache-control': 'no-cache',
            'content-security-policy': WALLET_PAGE_CSP,
            'x-content-type-options': 'nosniff',
          },
          body: WALLET_PAGE,
        };
      if (method === 'GET' && req.path === '/metrics' && o.metrics !== 'off') return await metricsResponse();
      if (method === 'GET' && req.path === '/ready') return { status: 200, headers: { 'content-type': 'text/plain' }, body: 'OK' };
      const m = /^\/spells\/([^/]*)\/?$/.exec(req.path);
      if (!m) throw new CharmsError('NOT_FOUND', `no route for ${req.method} ${req.path}`);
      if (method !== 'GET' && method !== 'PUT') {
        const r = noStore(jsonError(HTTP_STATUS.METHOD_NOT_ALLOWED, 'METHOD_NOT_ALLOWED', `method ${req.method} not allowed on /spells/<txid>`));
        return { ...r, headers: { ...r.headers, allow: 'GET, HEAD, PUT, OPTIONS' } };
      }
      const txid = m[1]!;
      if (!TXID.test(txid)) throw new CharmsError('INVALID_INPUT', 'txid: expected 64 hex characters');
      const id = txid.toLowerCase();

      if (method === 'GET') {
        if (!source)
          throw new CharmsError('UPSTREAM_UNAVAILABLE', 'no transaction source configured (ESPLORA_URL or BITCOIN_RPC_URL); PUT the transaction instead');
        let computed = false;
        let cached: Uint8Array;
        try {
          cached = await cache.getOrCompute(`spell-query:${mock ? 'mock' : 'real'}:${id}`, () => {
            computed = true;
            return fromSource(id);
          });
        } catch (e) {
          if (e instanceof UncachedAnswer) return respond(req, e.answer, { spell: 'no-store', none: 'no-store' });
          throw e;
        }
        (computed ? cacheMisses : cacheHits).inc({ cache: 'spell-query' });
        (computed ? cacheMissBytes : cacheHitBytes).inc({ cache: 'spell-query' }, cached.length);
        return respond(req, cached, { spell: CACHE_SPELL, none: CACHE_NO_SPELL });
      }

      // PUT
      let body;
      try {
        body = await readJsonBody(req, PUT_BODY_LIMIT, 'lossless');
      } catch (e) {
        if (e instanceof CharmsError && e.code !== 'INVALID_INPUT') throw e;
        throw new CharmsError('INVALID_INPUT', BODY_HELP, { cause: e });
      }
      const hex = body instanceof ValueMap ? body.get('tx_hex') : undefined;
      if (typeof hex !== 'string') throw new CharmsError('INVALID_INPUT', BODY_HELP);
      const tx = identifyTx(fromHex(hex.trim(), 'tx_hex'), 'tx_hex', 'INVALID_TX');
      if (tx.txid !== id) throw new CharmsError('INVALID_INPUT', `tx_hex is transaction ${tx.txid}, not ${id}`);
      const got = await answer(tagTx(tx.chain, hex.trim()));
      // a client-supplied body: cacheable by the client that sent it only
      return respond(req, got, { spell: 'private, no-cache', none: 'private, no-cache' });
    } catch (e) {
      return noStore(errorResponse(e, log));
    }
  };
}

/** Starts the service on one port (HTTP/1.1 and h2c); default port 17785. */
export async function startQueryServer(o: QueryServiceOptions & { host?: string; port?: number; limits?: Partial<ServerLimits> } = {}): Promise<Listening> {
  await enableMetrics(); // a server records metrics whether or not this port serves them
  return listenDual(queryHandler(o), {
    host: o.host ?? '0.0.0.0',
    port: o.port ?? DEFAULT_QUERY_PORT,
    ...(o.log ? { log: o.log } : {}),
    ...(o.limits ? { limits: o.limits } : {}),
    observe: requestObserver('query', queryRoute),
  });
}
