/**
 * Client of a remote proving service (`POST /spells/prove` with a CBOR ProveRequest), used by
 * the CLI when it does not prove locally and by a relaying `charms server`. Retries connection
 * errors and 5xx (transient prover failures) with bounded exponential backoff; a 4xx is final.
 * The answer is bounded in size (refused as soon as it is declared or read past the cap) and in
 * time (per attempt, and a body that stops arriving); an answer that is not a list of
 * transactions is the upstream's failure: 502 UPSTREAM_FAILED, which clients retry, never a 400.
 */
import { CharmsError } from '../errors.js';
import { decodeCbor, encodeCbor } from '../codec/cbor.js';
import { asArray } from '../model/primitives.js';
import { chainTxFromValue, proveRequestToValue, type ChainTx, type ProveRequest } from '../model/request.js';
import { redactText, redactUrl, withoutCredentials } from '../util/redact.js';
import { concatByteList } from '../util/bytes.js';

export interface RemoteProveOptions {
  url: string;
  /** Attempts in all (first try included). */
  attempts?: number;
  /** First backoff delay; doubles each retry up to `maxDelayMs`. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  progress?: (line: string) => void;
  fetchImpl?: typeof fetch;
  /** Largest answer read (default 32 MiB: a prove answer is a few transactions). */
  maxResponseBytes?: number;
  /** One attempt, from sending to the end of the answer (default 15 min: a real proof takes minutes). */
  timeoutMs?: number;
  /** An answer body that stops arriving for this long is cut (default 60 s). */
  stallMs?: number;
  /** Relaying servers this request has passed (ids, in order): sent as RELAYED_BY_HEADER. */
  relayedBy?: readonly string[];
}

const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** Why an answer was not used; never quotes it. */
class BadAnswer extends Error {}

/** Reads `res`'s body within the cap, cutting it when it stalls; `abort` cancels the request. */
async function readCapped(res: Response, maxBytes: number, stallMs: number, abort: AbortController): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) {
    abort.abort();
    throw new BadAnswer(`its answer declares ${declared} bytes, over the limit of ${maxBytes}`);
  }
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`its answer stopped arriving for ${stallMs} ms`)), stallMs);
    });
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await Promise.race([reader.read(), stalled]);
    } catch (e) {
      abort.abort();
      throw e;
    } finally {
      clearTimeout(timer);
    }
    if (chunk.done) break;
    size += chunk.value.byteLength;
    if (size > maxBytes) {
      abort.abort();
      throw new BadAnswer(`its answer is over the limit of ${maxBytes} bytes`);
    }
    parts.push(chunk.value);
  }
  return concatByteList(parts);
}

/**
 * The hop header: each relaying `charms server` adds its id, and refuses a request that already
 * carries it (its SVC_PROVE_API_URL leads back to itself) instead of waiting on itself forever.
 */
export const RELAYED_BY_HEADER = 'x-charms-relayed-by';
/** Hops a request may make through relays at most (a longer chain is a loop in all but name). */
export const MAX_RELAY_HOPS = 8;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function decodeProveResponse(body: Uint8Array): ChainTx[] {
  return asArray(decodeCbor(body), 'prove response').map((v, i) => chainTxFromValue(v, `prove response[${i}]`));
}

export async function proveRemote(req: ProveRequest, o: RemoteProveOptions): Promise<ChainTx[]> {
  const attempts = o.attempts ?? 3;
  const base = o.baseDelayMs ?? 1000;
  const max = o.maxDelayMs ?? 30_000;
  const progress = o.progress ?? (() => {});
  const doFetch = o.fetchImpl ?? fetch;
  const maxBytes = o.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const timeoutMs = o.timeoutMs ?? 15 * 60_000;
  const stallMs = o.stallMs ?? 60_000;
  const body = encodeCbor(proveRequestToValue(req, false));
  // credentials in the URL travel as a header (fetch refuses them in URLs) and never appear in messages
  let target: ReturnType<typeof withoutCredentials>;
  try {
    target = withoutCredentials(o.url);
  } catch {
    throw new CharmsError('CONFIG', `proving service URL is not a URL: ${redactUrl(o.url)}`);
  }
  const shown = redactUrl(o.url);
  const headers: Record<string, string> = { 'content-type': 'application/cbor' };
  if (target.authorization) headers.authorization = target.authorization;
  if (o.relayedBy?.length) headers[RELAYED_BY_HEADER] = o.relayedBy.join(',');
  let lastProblem = '';
  for (let i = 0; i < attempts; i++) {
    if (i > 0) {
      const delay = Math.min(max, base * 2 ** (i - 1));
      progress(`retrying in ${(delay / 1000).toFixed(1)} s (attempt ${i + 1}/${attempts}): ${lastProblem}`);
      await sleep(delay);
    } else progress(`sending proof request to ${shown}`);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    let res: Response;
    let bytes: Uint8Array;
    try {
      try {
        res = await doFetch(target.url, { method: 'POST', headers, body, signal: abort.signal });
      } catch (e) {
        lastProblem = abort.signal.aborted
          ? `${shown} gave no answer within ${timeoutMs} ms`
          : redactText(`cannot reach ${shown}: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}`);
        continue;
      }
      try {
        bytes = await readCapped(res, maxBytes, stallMs, abort);
      } catch (e) {
        if (e instanceof BadAnswer) throw new CharmsError('UPSTREAM_FAILED', `the proving service at ${shown} failed: ${e.message}; retry later`);
        lastProblem =
          abort.signal.aborted && !(e instanceof Error && /stopped arriving/.test(e.message))
            ? `${shown} did not finish its answer within ${timeoutMs} ms`
            : `${shown}: ${(e as Error).message}`;
        continue;
      }
    } finally {
      clearTimeout(timer);
    }
    if (res.status === 508)
      // a relay loop further on: final, retrying would loop again
      throw new CharmsError(
        'RELAY_LOOP',
        redactText(`proving service at ${shown} answered 508 (relay loop): ${new TextDecoder().decode(bytes.subarray(0, 2000))}`),
      );
    if (res.status >= 500) {
      lastProblem = redactText(`server error ${res.status}: ${new TextDecoder().decode(bytes.subarray(0, 300))}`);
      continue;
    }
    if (res.status >= 400)
      throw new CharmsError(
        'INVALID_INPUT',
        redactText(`proving service refused the request: ${res.status}: ${new TextDecoder().decode(bytes.subarray(0, 2000))}`),
      );
    let txs: ChainTx[];
    try {
      txs = decodeProveResponse(bytes);
    } catch (e) {
      // the upstream's fault, not the request's: retryable, and its bytes are not quoted
      throw new CharmsError('UPSTREAM_FAILED', `the proving service at ${shown} answered something that is not a list of transactions; retry later`, {
        cause: e,
      });
    }
    progress('proof received');
    return txs;
  }
  // still retryable later: a proving server forwarding here answers 500, as the spec asks
  throw new CharmsError('PROVER_TRANSIENT', `proving service failed after ${attempts} attempts: ${lastProblem}`);
}

/** The `/ready` route of the proving service whose prove route is `proveUrl` (`…/spells/prove` → `…/ready`; query kept). */
function readyUrlOf(proveUrl: string): string {
  const u = new URL(proveUrl);
  u.pathname = /\/spells\/prove\/?$/.test(u.pathname) ? u.pathname.replace(/\/spells\/prove\/?$/, '/ready') : '/ready';
  return u.toString();
}

/**
 * Why the proving service at `proveUrl` cannot serve now, from its `GET /ready` (undefined: it
 * answered 200): unreachable, silent for `timeoutMs`, not ready, or a relay loop (the request
 * carries `relayedBy`, so a relay whose upstream leads back to it sees its own id and answers 508).
 */
export async function upstreamUnready(
  proveUrl: string,
  o: { relayedBy?: readonly string[]; timeoutMs?: number; fetchImpl?: typeof fetch } = {},
): Promise<string | undefined> {
  const shown = redactUrl(readyUrlOf(proveUrl));
  let target: ReturnType<typeof withoutCredentials>;
  try {
    target = withoutCredentials(readyUrlOf(proveUrl));
  } catch {
    return `the proving service URL (SVC_PROVE_API_URL) is not a URL: ${redactUrl(proveUrl)}`;
  }
  const headers: Record<string, string> = {};
  if (target.authorization) headers.authorization = target.authorization;
  if (o.relayedBy?.length) headers[RELAYED_BY_HEADER] = o.relayedBy.join(',');
  const timeoutMs = o.timeoutMs ?? 5000;
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    let res: Response;
    try {
      res = await (o.fetchImpl ?? fetch)(target.url, { headers, signal: abort.signal });
    } catch (e) {
      const why = abort.signal.aborted ? `no answer within ${timeoutMs} ms` : (((e as Error).cause as Error | undefined)?.message ?? (e as Error).message);
      return redactText(`the upstream proving service (SVC_PROVE_API_URL) ${shown} cannot be reached: ${why}`);
    }
    const text = new TextDecoder().decode((await readCapped(res, 4096, timeoutMs, abort).catch(() => new Uint8Array())).subarray(0, 300)).trim();
    if (res.status === 200) return undefined;
    if (res.status === 508 || /relay loop/.test(text))
      return redactText(
        `relay loop: the upstream proving service (SVC_PROVE_API_URL) ${shown} leads back to this server (or to a relay before it): point SVC_PROVE_API_URL at a proving service, not at a relay that forwards here`,
      );
    return redactText(`the upstream proving service (SVC_PROVE_API_URL) ${shown} is not ready: ${res.status}${text ? ` ${text}` : ''}`);
  } finally {
    clearTimeout(timer);
  }
}
