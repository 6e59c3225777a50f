/**
 * The one error class of the project. Every error carries a stable machine-readable `code`
 * (servers return it as `{error, code}`), a short message that tells the user what to do, and
 * an optional `cause` chain. Modelled on viem's BaseError.
 */
/**
 * Every code with the HTTP status both servers answer it with (`httpStatus`). Add a code here and
 * the compiler asks for its status. 4xx: the caller must change the request; 5xx: retry later.
 */
export const HTTP_STATUS = {
  INVALID_INPUT: 400, // malformed user input: hex, lengths, app keys, YAML/JSON
  CBOR_DECODE: 400, // bytes are not the CBOR we expect
  INVALID_SPELL: 400, // a spell breaks a protocol rule
  NO_SPELL: 400, // the transaction carries no spell (`isNoSpell` tells this from real errors)
  PROOF_INVALID: 400, // the proof does not verify
  UNSUPPORTED: 400, // a version/chain/feature we do not (yet) support
  INVALID_TX: 400, // transaction bytes cannot be parsed
  APP_FAILED: 400, // an app contract rejected or crashed
  PROVER_UNAVAILABLE: 503, // the configured prover backend cannot prove (the operator must fix its configuration)
  SPELL_UNEXECUTABLE: 400, // the prover network could not execute the spell checker on this spell
  INSUFFICIENT_FUNDS: 400, // the funding does not cover outputs and fees
  SCROLLS_REFUSED: 400, // the Scrolls canister refused the request (its message says why)
  NOT_FOUND: 404, // unknown transaction or route
  METHOD_NOT_ALLOWED: 405, // a known route asked with a method it does not serve
  REQUEST_TIMEOUT: 408, // the client did not send its request (headers or body) in time
  PAYLOAD_TOO_LARGE: 413, // a body or input over its limit
  TOO_MANY_REQUESTS: 429, // one client (by address, or a trusted proxy's X-Forwarded-For) has too many requests in progress
  PROVER_TRANSIENT: 500, // retryable prover failure (the spec's 500: retry with backoff)
  PROOF_UNVERIFIED: 500, // a proof from the prover did not verify: never put in a transaction
  INTERNAL: 500, // a bug: logged, answered without details
  IO: 500, // a local file or process failed
  CONFIG: 500, // the server's own configuration is wrong
  UPSTREAM_FAILED: 502, // a transaction source or node answered with a failure
  PROVER_ANSWER_INVALID: 502, // a remote prover's transaction does not match the request: never signed
  UPSTREAM_UNAVAILABLE: 503, // a transaction source or node gave no answer, or none is configured
  SERVER_BUSY: 503, // a server-wide limit (e.g. the in-flight body budget) is reached: retry shortly
  RELAY_LOOP: 508, // a relaying server's request came back to it (SVC_PROVE_API_URL points at itself): final
} as const;

export type ErrorCode = keyof typeof HTTP_STATUS;

export class CharmsError extends Error {
  override name = 'CharmsError';
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }

  /**
   * Message followed by the messages of the cause chain, `a: b: c`; a cause's message that is
   * already said (wrappers often quote their cause, some with another capital) is not said again.
   */
  get fullMessage(): string {
    const parts = [this.message];
    const said = (m: string) => parts.some((p) => p.toLowerCase().includes(m.toLowerCase()));
    let c: unknown = this.cause;
    for (let depth = 0; c !== undefined && c !== null && depth < 8; depth++) {
      const m = c instanceof Error ? c.message : String(c);
      if (!said(m)) parts.push(m);
      if (!(c instanceof Error)) break;
      c = c.cause;
    }
    return parts.join(': ');
  }
}

/** The HTTP status for a thrown value: by its code; anything not a CharmsError is a 500. */
export const httpStatus = (e: unknown): number => (e instanceof CharmsError ? HTTP_STATUS[e.code] : 500);
