/**
 * The Scrolls canister client: update calls to the Scrolls canisters on the Internet Computer
 * through the DFINITY agent (`@icp-sdk/core`, the maintained successor of `@dfinity/agent`,
 * `@dfinity/candid` and `@dfinity/principal`). The agent signs nothing here (anonymous caller),
 * sends CBOR envelopes, and verifies the BLS certificate carrying each answer against the root
 * key: an answer that does not verify is never used.
 *
 * Errors (all CharmsError):
 * - the canister's own `Err(text)` starting with "Input error" (or an unnamed check, "Condition
 *   failed") → SCROLLS_REFUSED (HTTP 400): the transaction or request is wrong, retrying will not
 *   help; the canister's message is kept;
 * - any other `Err(text)` ("System error: …", a Mithril lookup that has not certified the tx yet),
 *   a reject of the call (trap, missing canister), an answer that fails our checks or whose
 *   certificate does not verify → UPSTREAM_FAILED (HTTP 502), message kept;
 * - unreachable host, timeouts → UPSTREAM_UNAVAILABLE (HTTP 503, retry later); an answer over
 *   the size limit → UPSTREAM_FAILED.
 */
import type { HttpAgent } from '@icp-sdk/core/agent';
import { IDL } from '@icp-sdk/core/candid';
import { Principal } from '@icp-sdk/core/principal';
import { CharmsError } from '../errors.js';
import { checkCborShape, decodeCbor } from '../codec/cbor.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { concatByteList, fromHex, toHex } from '../util/bytes.js';
import { redactText, redactUrl } from '../util/redact.js';
import { utxoIdToString, type UtxoId } from '../model/primitives.js';
import { FINALITY_VKEY_HEX, SCROLLS_VKEY_HEX } from '../cardano/scripts-data.js';
import { assertCardanoFinality } from '../cardano/finality.js';
import { MAX_SCROLL_OUTPUTS, SCROLLS_ADDRS_PUBKEY_HEX, verifySignedScrollOutputs, type SignedScrollOutputs } from '../bitcoin/scrolls.js';
import { BITCOIN_METHODS, CARDANO_METHODS, type AddressesResultValue, type MethodIdl, type TextResultValue } from './candid.js';
import { checkScrollsWitness } from './cardano-witness.js';
import { SCROLLS_DEFAULTS, type ScrollsSettings } from '../settings/scrolls.js';

type AgentModule = typeof import('@icp-sdk/core/agent');
type AgentOptions = NonNullable<Parameters<AgentModule['HttpAgent']['createSync']>[0]>;

/** The keys answers are checked with. Defaults: the protocol's (see the constants' modules). */
export interface ScrollsKeys {
  /** Ed25519 key of `sign`'s vkey witness. */
  cardanoVkey: Uint8Array;
  /** Ed25519 key of `certify_final`'s signature. */
  finalityVkey: Uint8Array;
  /** x-only secp256k1 key of the signed scriptPubKey map. */
  bitcoinAddrsPubkey: Uint8Array;
}

export interface ScrollsClientOptions extends Partial<ScrollsSettings> {
  /** Other keys, for a local replica or a test canister; production uses the defaults. */
  keys?: Partial<ScrollsKeys>;
  /** Retries of a failed HTTP request (the agent backs off exponentially). Default 3. */
  retryTimes?: number;
  /** Time limit of one HTTP request. Default 120 s (threshold signing and Mithril lookups are slow). */
  requestTimeoutMs?: number;
  /** Largest HTTP response body read. Default 8 MiB (the IC caps replies at 2 MiB). */
  maxResponseBytes?: number;
}

export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

class ResponseTooLarge extends Error {}
/** An answer whose CBOR is malformed or of a shape no IC answer has: never handed to the agent's decoder. */
class MalformedAnswer extends Error {}

/** Far more than a certificate with its delegation and hash tree holds (a few hundred items). */
const ANSWER_SHAPE = { maxDepth: 64, maxItems: 50_000 };

/**
 * Checks an IC answer and the certificates it carries (CBOR inside byte strings, a delegation's
 * certificate inside that) before the agent decodes them: the agent's CBOR decoder allocates what
 * an answer declares, so an 8 MiB answer declaring a 2^32−1 array would cost seconds and a GB.
 */
function checkIcCbor(bytes: Uint8Array, nesting = 0): void {
  try {
    checkCborShape(bytes, ANSWER_SHAPE);
  } catch (e) {
    throw new MalformedAnswer(`not the shape of an IC answer: ${(e as Error).message}`);
  }
  if (nesting >= 3) return;
  // bounded now (items and depth): our decoder builds it cheaply
  const walk = (v: Value, depth: number): void => {
    if (depth > ANSWER_SHAPE.maxDepth) return;
    if (v instanceof Tagged) return walk(v.value, depth + 1);
    if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (v instanceof ValueMap)
      for (const [k, x] of v.entries) {
        if (k === 'certificate' && x instanceof Uint8Array) checkIcCbor(x, nesting + 1);
        else walk(x, depth + 1);
      }
  };
  walk(decodeCbor(bytes), 0);
}

/**
 * `fetch` with a time limit per request and a cap on the bytes read from a response body (a
 * misconfigured or hostile host cannot make us buffer without bound).
 */
function boundedFetch(timeoutMs: number, maxBytes: number): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const declared = Number(res.headers.get('content-length') ?? '0');
    if (declared > maxBytes) {
      await res.body?.cancel();
      throw new ResponseTooLarge(`response of ${declared} bytes exceeds ${maxBytes}`);
    }
    if (!res.body) return res;
    // read whole (capped), then checked: the agent only ever sees an answer of bounded shape
    const parts: Uint8Array[] = [];
    let seen = 0;
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      seen += value.byteLength;
      if (seen > maxBytes) {
        await reader.cancel().catch(() => {});
        throw new ResponseTooLarge(`response exceeds ${maxBytes} bytes`);
      }
      parts.push(value);
    }
    const body = concatByteList(parts);
    const cbor = (res.headers.get('content-type') ?? '').includes('cbor') || (res.status >= 200 && res.status < 300);
    if (cbor && body.length > 0) checkIcCbor(body);
    const out = new Response(res.status === 204 || res.status === 304 ? null : body, { status: res.status, statusText: res.statusText, headers: res.headers });
    // the agent tells an unsupported v4 endpoint by the response URL
    Object.defineProperty(out, 'url', { value: res.url });
    return out;
  };
}

/** The Cardano signer the Cardano builder depends on (`ScrollsClient` is one). */
export interface CardanoScrollsSigner {
  /** The transaction with the Scrolls vkey witness added; body untouched (checked). */
  signCardanoTx(tx: Uint8Array): Promise<Uint8Array>;
}

/** Only the most recent text of a (possibly long) canister message goes into our errors. */
const MAX_MESSAGE = 1000;
const clip = (s: string) => (s.length > MAX_MESSAGE ? `${s.slice(0, MAX_MESSAGE)}…` : s);

export class ScrollsClient implements CardanoScrollsSigner {
  readonly settings: ScrollsSettings;
  /** The keys answers are checked with. */
  readonly keys: ScrollsKeys;
  /**
   * The agent, made at the first call: `@icp-sdk/core/agent` (the heaviest module of the package)
   * is loaded by a client that calls a canister, not by every import of the package.
   */
  private agent: Promise<{ agent: HttpAgent; lib: AgentModule }> | undefined;
  private readonly agentOptions: AgentOptions;

  constructor(opts: ScrollsClientOptions = {}) {
    this.settings = {
      host: opts.host ?? SCROLLS_DEFAULTS.host,
      cardanoCanisterId: opts.cardanoCanisterId ?? SCROLLS_DEFAULTS.cardanoCanisterId,
      bitcoinCanisterId: opts.bitcoinCanisterId ?? SCROLLS_DEFAULTS.bitcoinCanisterId,
      ...(opts.rootKey ? { rootKey: opts.rootKey } : {}),
    };
    this.keys = {
      cardanoVkey: opts.keys?.cardanoVkey ?? fromHex(SCROLLS_VKEY_HEX),
      finalityVkey: opts.keys?.finalityVkey ?? fromHex(FINALITY_VKEY_HEX),
      bitcoinAddrsPubkey: opts.keys?.bitcoinAddrsPubkey ?? fromHex(SCROLLS_ADDRS_PUBKEY_HEX),
    };
    const fetchBounded = boundedFetch(opts.requestTimeoutMs ?? 120_000, opts.maxResponseBytes ?? MAX_RESPONSE_BYTES);
    // fetch refuses URLs with user-info: such credentials go as a Basic Authorization header
    const host = new URL(this.settings.host);
    const credentials = host.username ? { name: decodeURIComponent(host.username), password: decodeURIComponent(host.password) } : undefined;
    host.username = '';
    host.password = '';
    this.agentOptions = {
      host: host.toString(),
      ...(credentials ? { credentials } : {}),
      fetch: fetchBounded,
      retryTimes: opts.retryTimes ?? 3,
      ...(this.settings.rootKey ? { rootKey: this.settings.rootKey } : {}),
    };
  }

  private loadAgent(): Promise<{ agent: HttpAgent; lib: AgentModule }> {
    return (this.agent ??= import('@icp-sdk/core/agent').then((lib) => ({ agent: lib.HttpAgent.createSync(this.agentOptions), lib })));
  }

  /**
   * `scrolls_cardano.sign`: the canister verifies the (non-mock) spell and the fee output, then
   * adds its vkey witness. We check that the body is unchanged and the witness verifies.
   */
  async signCardanoTx(tx: Uint8Array): Promise<Uint8Array> {
    const r = (await this.update(this.settings.cardanoCanisterId, 'sign', CARDANO_METHODS.sign, [toHex(tx)])) as TextResultValue;
    const signedHex = this.unwrap(r, 'sign');
    let signed: Uint8Array;
    try {
      signed = fromHex(signedHex, 'signed transaction');
    } catch (e) {
      throw new CharmsError('UPSTREAM_FAILED', 'the Scrolls canister answered sign with something that is not hex', { cause: e });
    }
    checkScrollsWitness(tx, signed, this.keys.cardanoVkey);
    return signed;
  }

  /**
   * `scrolls_cardano.certify_final`: once Mithril certifies the transaction, the canister signs
   * its body hash with the finality key. Returns the 64-byte signature (checked) that makes the
   * `{tx, signature}` finality form of a beaming source.
   */
  async certifyCardanoFinal(tx: Uint8Array): Promise<Uint8Array> {
    const r = (await this.update(this.settings.cardanoCanisterId, 'certify_final', CARDANO_METHODS.certify_final, [toHex(tx)])) as TextResultValue;
    const sigHex = this.unwrap(r, 'certify_final');
    let sig: Uint8Array;
    try {
      sig = fromHex(sigHex, 'finality signature', 64);
      assertCardanoFinality(tx, sig, this.keys.finalityVkey);
    } catch (e) {
      throw new CharmsError('UPSTREAM_FAILED', `the Scrolls canister's finality signature was refused: ${(e as Error).message}`, { cause: e });
    }
    return sig;
  }

  /**
   * `scrolls_bitcoin.addresses`: the Scrolls-controlled scriptPubKeys for outputs `outIs` of the
   * transaction whose first input is `txIn0`, signed. The map must cover exactly `outIs` and its
   * signature must verify.
   */
  async bitcoinScrollOutputs(txIn0: UtxoId, outIs: readonly number[]): Promise<SignedScrollOutputs> {
    const wanted = [...new Set(outIs)].sort((a, b) => a - b);
    if (wanted.length === 0 || wanted.length > MAX_SCROLL_OUTPUTS)
      throw new CharmsError('INVALID_SPELL', `a spell lists 1 to ${MAX_SCROLL_OUTPUTS} Scrolls outputs, got ${wanted.length}`);
    const r = (await this.update(this.settings.bitcoinCanisterId, 'addresses', BITCOIN_METHODS.addresses, [
      utxoIdToString(txIn0),
      wanted,
    ])) as AddressesResultValue;
    if ('Err' in r) throw this.canisterError(r.Err, 'addresses');
    const signed: SignedScrollOutputs = { scriptPubkeys: new Map(r.Ok.script_pubkeys), signature: r.Ok.signature };
    const got = [...signed.scriptPubkeys.keys()].sort((a, b) => a - b);
    if (got.length !== r.Ok.script_pubkeys.length || got.join() !== wanted.join())
      throw new CharmsError('UPSTREAM_FAILED', `the Scrolls canister answered scriptPubKeys for outputs [${got.join(', ')}], asked for [${wanted.join(', ')}]`);
    try {
      verifySignedScrollOutputs(signed, this.keys.bitcoinAddrsPubkey);
    } catch (e) {
      throw new CharmsError('UPSTREAM_FAILED', `the Scrolls canister's scriptPubKeys were refused: ${(e as Error).message}`, { cause: e });
    }
    return signed;
  }

  private unwrap(r: TextResultValue, method: string): string {
    if ('Err' in r) throw this.canisterError(r.Err, method);
    return r.Ok;
  }

  private canisterError(message: string, method: string): CharmsError {
    const refused = /^(Input error|Condition failed)/.test(message);
    return new CharmsError(
      refused ? 'SCROLLS_REFUSED' : 'UPSTREAM_FAILED',
      `the Scrolls canister ${refused ? 'refused' : 'failed'} ${method}: ${clip(message)}`,
    );
  }

  private async update(canisterId: string, method: string, idl: MethodIdl, args: unknown[]): Promise<unknown> {
    const where = `Scrolls canister ${canisterId} at ${redactUrl(this.settings.host)}`;
    let reply: Uint8Array;
    let lib: AgentModule | undefined;
    try {
      const loaded = await this.loadAgent();
      lib = loaded.lib;
      const res = await loaded.agent.update(Principal.fromText(canisterId), { methodName: method, arg: IDL.encode(idl.args, args) });
      reply = res.reply;
    } catch (e) {
      throw agentFailure(e, where, method, lib);
    }
    try {
      const [value] = IDL.decode([idl.ret], reply);
      return value;
    } catch (e) {
      throw new CharmsError('UPSTREAM_FAILED', `${where} answered ${method} with an unexpected candid value`, { cause: e });
    }
  }
}

/**
 * The first line of a text from the replica or the agent, printable characters only, clipped: what
 * may reach a client (the agent's messages carry stack traces with file paths, and whatever the
 * replica sent).
 */
const topLine = (x: string, max = 200): string => {
  const line = (x.split(/\r?\n/, 1)[0] ?? '').replace(/[^\x20-\x7e]/g, '?').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
};

/**
 * Every failure of the agent is a 5xx: the canister or the network, not the user's request. The
 * message clients see is one line of our own (with a reject's own first line); the agent's whole
 * text stays in the cause, for the log.
 */
function agentFailure(e: unknown, where: string, method: string, lib: AgentModule | undefined): CharmsError {
  const detail = new Error(clip(redactText(e instanceof Error ? e.message : String(e))));
  const fail = (code: 'UPSTREAM_FAILED' | 'UPSTREAM_UNAVAILABLE', what: string) => new CharmsError(code, `${where} ${what}`, { cause: detail });
  if (lib === undefined) return new CharmsError('INTERNAL', `${where}: the IC agent did not load: ${topLine(detail.message)}`, { cause: e });
  const { RejectError, TransportError, TrustError } = lib;
  if (e instanceof TransportError) {
    // the fetch failure the agent wraps: an over-long or malformed answer is a failure of the host, not an outage
    const inner = (e.code as { error?: unknown }).error;
    if (inner instanceof ResponseTooLarge) return fail('UPSTREAM_FAILED', `answered ${method} with too much data: ${inner.message}`);
    if (inner instanceof MalformedAnswer) return fail('UPSTREAM_FAILED', `answered ${method} with an answer that is ${topLine(inner.message)}`);
    return fail('UPSTREAM_UNAVAILABLE', `is unreachable (${topLine(redactText(e.message))}); retry later`);
  }
  if (e instanceof MalformedAnswer) return fail('UPSTREAM_FAILED', `answered ${method} with an answer that is ${topLine(e.message)}`);
  if (e instanceof RejectError) {
    const reject = (e.code as { rejectMessage?: unknown }).rejectMessage;
    return fail('UPSTREAM_FAILED', `rejected ${method}${typeof reject === 'string' ? `: ${topLine(reject)}` : ''}`);
  }
  if (e instanceof TrustError) return fail('UPSTREAM_FAILED', `answered ${method} with a certificate that does not verify against the root key`);
  return fail('UPSTREAM_FAILED', `failed ${method}: its answer could not be used (details in the server log)`);
}
