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
import { HttpAgent, AgentError, RejectError, TransportError, TrustError } from '@icp-sdk/core/agent';
import { IDL } from '@icp-sdk/core/candid';
import { Principal } from '@icp-sdk/core/principal';
import { CharmsError } from '../errors.js';
import { fromHex, toHex } from '../util/bytes.js';
import { redactText, redactUrl } from '../util/redact.js';
import { utxoIdToString, type UtxoId } from '../model/primitives.js';
import { FINALITY_VKEY_HEX, SCROLLS_VKEY_HEX } from '../cardano/scripts-data.js';
import { assertCardanoFinality } from '../cardano/finality.js';
import { MAX_SCROLL_OUTPUTS, SCROLLS_ADDRS_PUBKEY_HEX, verifySignedScrollOutputs, type SignedScrollOutputs } from '../bitcoin/scrolls.js';
import { BITCOIN_METHODS, CARDANO_METHODS, type AddressesResultValue, type MethodIdl, type TextResultValue } from './candid.js';
import { checkScrollsWitness } from './cardano-witness.js';
import { SCROLLS_DEFAULTS, type ScrollsSettings } from '../settings/scrolls.js';

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
    let seen = 0;
    const capped = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctl) {
          seen += chunk.byteLength;
          if (seen > maxBytes) ctl.error(new ResponseTooLarge(`response exceeds ${maxBytes} bytes`));
          else ctl.enqueue(chunk);
        },
      }),
    );
    const out = new Response(capped, { status: res.status, statusText: res.statusText, headers: res.headers });
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
  private readonly agent: HttpAgent;

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
    this.agent = HttpAgent.createSync({
      host: host.toString(),
      ...(credentials ? { credentials } : {}),
      fetch: fetchBounded,
      retryTimes: opts.retryTimes ?? 3,
      ...(this.settings.rootKey ? { rootKey: this.settings.rootKey } : {}),
    });
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
    const r = (await this.update(this.settings.bitcoinCanisterId, 'addresses', BITCOIN_METHODS.addresses, [utxoIdToString(txIn0), wanted])) as AddressesResultValue;
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
    try {
      const res = await this.agent.update(Principal.fromText(canisterId), { methodName: method, arg: IDL.encode(idl.args, args) });
      reply = res.reply;
    } catch (e) {
      throw agentFailure(e, where, method);
    }
    try {
      const [value] = IDL.decode([idl.ret], reply);
      return value;
    } catch (e) {
      throw new CharmsError('UPSTREAM_FAILED', `${where} answered ${method} with an unexpected candid value: ${(e as Error).message}`, { cause: e });
    }
  }
}

/** Every failure of the agent is a 5xx: the canister or the network, not the user's request. */
function agentFailure(e: unknown, where: string, method: string): CharmsError {
  const text = (x: unknown) => clip(redactText(x instanceof Error ? x.message : String(x)));
  let what: string;
  if (e instanceof TransportError) {
    // the fetch failure the agent wraps: an over-long answer is a failure of the host, not an outage
    const inner = (e.code as { error?: unknown }).error;
    if (inner instanceof ResponseTooLarge) return new CharmsError('UPSTREAM_FAILED', `${where} answered ${method} with too much data: ${inner.message}`, { cause: e });
    return new CharmsError('UPSTREAM_UNAVAILABLE', `${where} is unreachable (${text(e)}); retry later`, { cause: e });
  }
  if (e instanceof RejectError) what = `rejected ${method}: ${text(e)}`;
  else if (e instanceof TrustError) what = `answered ${method} with a certificate that does not verify against the root key: ${text(e)}`;
  else if (e instanceof AgentError) what = `failed ${method}: ${text(e)}`;
  else what = `failed ${method}: ${text(e)}`;
  return new CharmsError('UPSTREAM_FAILED', `${where} ${what}`, { cause: e });
}
