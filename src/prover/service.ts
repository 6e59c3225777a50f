/**
 * What `POST /spells/prove` does with a request body: decode it (JSON or CBOR), prove locally
 * (mock or a real backend) or relay to another proving service, and encode the answer in the
 * request's format.
 */
import { randomUUID } from 'node:crypto';
import { CharmsError } from '../errors.js';
import type { Logger } from '../infra/log.js';
import { decodeCbor, encodeCbor } from '../codec/cbor.js';
import { parseJson, toJsonCompact } from '../codec/json.js';
import { ValueMap, type Value } from '../codec/value.js';
import { chainTxToValue, proveRequestFromValue, type ChainTx, type ProveRequest } from '../model/request.js';
import { proveSpellTx, type ProveDeps } from './prove.js';
import { CARDANO_MOCK_NOTICE } from './prove-cardano.js';
import { parseCardanoTx } from '../cardano/tx.js';
import { proveRemote, upstreamUnready, type RemoteProveOptions } from './client.js';
import type { ProofBackend } from './backend.js';
import { redactUrl } from '../util/redact.js';
import { fromHex } from '../util/bytes.js';
import { proofDuration, proofs, proofsInFlight, timed } from '../util/metrics.js';

/** Runs one prove request under the proof metrics of `backend`. */
function measured<T>(backend: string, work: () => Promise<T>): Promise<T> {
  proofsInFlight.inc({ backend });
  return timed(work, (seconds, outcome) => {
    proofsInFlight.dec({ backend });
    proofs.inc({ backend, outcome });
    proofDuration.observe({ backend }, seconds);
  });
}

export type BodyFormat = 'json' | 'cbor';

export function decodeProveRequest(body: Uint8Array, format: BodyFormat): ProveRequest {
  let v: Value;
  if (format === 'cbor') {
    try {
      v = decodeCbor(body);
    } catch (e) {
      throw new CharmsError('CBOR_DECODE', 'Invalid CBOR', { cause: e });
    }
  } else {
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    } catch (e) {
      throw new CharmsError('INVALID_INPUT', 'Invalid JSON: body is not UTF-8', { cause: e });
    }
    try {
      v = parseJson(text);
    } catch (e) {
      // the reference's prefix, once: our parser's own message starts with "invalid JSON: "
      throw new CharmsError('INVALID_INPUT', `Invalid JSON: ${(e as Error).message.replace(/^invalid JSON: /, '')}`, { cause: e });
    }
  }
  return proveRequestFromValue(v, format === 'json');
}

export function encodeProveResponse(txs: ChainTx[], format: BodyFormat): Uint8Array {
  const v = txs.map(chainTxToValue);
  return format === 'cbor' ? encodeCbor(v) : new TextEncoder().encode(toJsonCompact(v));
}

export interface ProveService {
  readonly description: string;
  /** `relayedBy`: the relaying servers the request came through (the hop header). */
  prove(req: ProveRequest, relayedBy?: readonly string[]): Promise<ChainTx[]>;
  /** A relay's id in the hop header (a request carrying it has looped back). */
  readonly relayId?: string;
  /**
   * Why it cannot serve now (undefined: ready), for `GET /ready`; `relayedBy`: the relays the
   * readiness request came through (a relay asks its upstream, so a loop is seen).
   */
  unready(relayedBy?: readonly string[]): Promise<string | undefined>;
  ready(): Promise<boolean>;
}

/** Proves on this machine with the given backend (mock, or a real one). */
export class LocalProveService implements ProveService {
  readonly description: string;
  constructor(private readonly deps: ProveDeps & { backend: ProofBackend }) {
    this.description = `local ${deps.backend.name} prover`;
  }
  async prove(req: ProveRequest): Promise<ChainTx[]> {
    return measured(this.deps.backend.name, async () => (await proveSpellTx(req, this.deps)).txs);
  }
  async unready(): Promise<string | undefined> {
    const b = this.deps.backend;
    return (await b.unavailable?.()) ?? ((await b.ready()) ? undefined : `the ${b.name} prover backend is not ready`);
  }
  async ready(): Promise<boolean> {
    return (await this.unready()) === undefined;
  }
}

/** Forwards requests to another proving service (what a non-prover `charms server` does). */
export class RelayProveService implements ProveService {
  readonly description: string;
  constructor(
    private readonly url: string,
    private readonly log?: Logger,
    /** Attempts, answer size and time limits (defaults: prover/client.ts). */
    private readonly limits: Omit<RemoteProveOptions, 'url' | 'progress'> = {},
  ) {
    this.description = `relay to ${redactUrl(url)}`;
  }
  readonly relayId = randomUUID();
  async prove(req: ProveRequest, relayedBy: readonly string[] = []): Promise<ChainTx[]> {
    const log = this.log;
    return measured('relay', () =>
      proveRemote(req, { ...this.limits, url: this.url, relayedBy: [...relayedBy, this.relayId], ...(log ? { progress: (m: string) => log.info(m) } : {}) }),
    );
  }
  /** Not while its upstream is: unreachable, not ready, or leading back here (the hop header carries our id). */
  unready(relayedBy: readonly string[] = []): Promise<string | undefined> {
    return upstreamUnready(this.url, { relayedBy: [...relayedBy, this.relayId] });
  }
  async ready(): Promise<boolean> {
    return (await this.unready()) === undefined;
  }
}

/** The body-level handler the HTTP server calls. */
/**
 * The response header that tells a client its Cardano transaction lacks the Scrolls co-signature
 * (mock proofs: the canister signs real proofs only), or undefined. Read from the response itself,
 * so cached answers carry it too.
 */
export function proveResponseNotice(out: Uint8Array, format: BodyFormat): Record<string, string> | undefined {
  let v;
  try {
    v = format === 'cbor' ? decodeCbor(out) : parseJson(new TextDecoder().decode(out));
  } catch {
    return undefined; // not a list of transactions: no notice to give
  }
  if (!Array.isArray(v)) return undefined;
  for (const t of v) {
    const hex = t instanceof ValueMap ? t.get('cardano') : undefined;
    if (typeof hex !== 'string') continue;
    let signed = true;
    try {
      signed = parseCardanoTx(fromHex(hex)).witnessSet.entries.some(([k]) => k === 0n);
    } catch {
      continue; // not ours to judge here: the client parses it
    }
    if (!signed) return { 'x-charms-notice': CARDANO_MOCK_NOTICE };
  }
  return undefined;
}

export function bodyHandler(service: ProveService) {
  return async ({ body, format, relayedBy }: { body: Uint8Array; format: BodyFormat; relayedBy?: readonly string[] }): Promise<Uint8Array> =>
    encodeProveResponse(await service.prove(decodeProveRequest(body, format), relayedBy), format);
}
