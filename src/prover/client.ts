/**
 * Client of a remote proving service (`POST /spells/prove` with a CBOR ProveRequest), used by
 * the CLI when it does not prove locally. Retries connection errors and 5xx (transient prover
 * failures) with bounded exponential backoff; a 4xx is final.
 */
import { CharmsError } from '../errors.js';
import { decodeCbor, encodeCbor } from '../codec/cbor.js';
import { asArray } from '../model/primitives.js';
import { chainTxFromValue, proveRequestToValue, type ChainTx, type ProveRequest } from '../model/request.js';
import { redactText, redactUrl, withoutCredentials } from '../util/redact.js';

export interface RemoteProveOptions {
  url: string;
  /** Attempts in all (first try included). */
  attempts?: number;
  /** First backoff delay; doubles each retry up to `maxDelayMs`. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  progress?: (line: string) => void;
  fetchImpl?: typeof fetch;
}

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
  let lastProblem = '';
  for (let i = 0; i < attempts; i++) {
    if (i > 0) {
      const delay = Math.min(max, base * 2 ** (i - 1));
      progress(`retrying in ${(delay / 1000).toFixed(1)} s (attempt ${i + 1}/${attempts}): ${lastProblem}`);
      await sleep(delay);
    } else progress(`sending proof request to ${shown}`);
    let res: Response;
    try {
      res = await doFetch(target.url, { method: 'POST', headers, body });
    } catch (e) {
      lastProblem = redactText(`cannot reach ${shown}: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}`);
      continue;
    }
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (res.status >= 500) {
      lastProblem = redactText(`server error ${res.status}: ${new TextDecoder().decode(bytes).slice(0, 300)}`);
      continue;
    }
    if (res.status >= 400)
      throw new CharmsError('INVALID_INPUT', redactText(`proving service refused the request: ${res.status}: ${new TextDecoder().decode(bytes).slice(0, 2000)}`));
    progress('proof received');
    return decodeProveResponse(bytes);
  }
  // still retryable later: a proving server forwarding here answers 500, as the spec asks
  throw new CharmsError('PROVER_TRANSIENT', `proving service failed after ${attempts} attempts: ${lastProblem}`);
}
