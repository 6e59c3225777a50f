/**
 * The one error class of the project. Every error carries a stable machine-readable `code`
 * (servers return it as `{error, code}`), a short message that tells the user what to do, and
 * an optional `cause` chain. Modelled on viem's BaseError.
 */
export type ErrorCode =
  | 'INVALID_INPUT' // malformed user input: hex, lengths, app keys, YAML/JSON
  | 'CBOR_DECODE' // bytes are not the CBOR we expect
  | 'INVALID_SPELL' // a spell breaks a protocol rule
  | 'NO_SPELL' // the transaction carries no (valid) spell
  | 'PROOF_INVALID' // the proof does not verify
  | 'UNSUPPORTED' // a version/chain/feature we do not (yet) support
  | 'INVALID_TX' // transaction bytes cannot be parsed
  | 'APP_FAILED' // an app contract rejected or crashed
  | 'PROVER_UNAVAILABLE' // the configured prover backend cannot prove
  | 'PROVER_TRANSIENT' // retryable prover failure (HTTP 500)
  | 'INSUFFICIENT_FUNDS'
  | 'NOT_FOUND'
  | 'UPSTREAM_UNAVAILABLE'
  | 'SCROLLS_REFUSED' // the Scrolls canister refused the request (its message says why)
  | 'IO'
  | 'CONFIG'
  | 'PAYLOAD_TOO_LARGE'
  | 'INTERNAL';

export class CharmsError extends Error {
  override name = 'CharmsError';
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
  }

  /** Message followed by the messages of the cause chain, `a: b: c`. */
  get fullMessage(): string {
    const parts = [this.message];
    let c: unknown = this.cause;
    for (let depth = 0; c !== undefined && c !== null && depth < 8; depth++) {
      if (c instanceof Error) {
        if (!parts.includes(c.message)) parts.push(c.message);
        c = c.cause;
      } else {
        parts.push(String(c));
        break;
      }
    }
    return parts.join(': ');
  }
}

export const fail = (code: ErrorCode, message: string, cause?: unknown): never => {
  throw new CharmsError(code, message, cause === undefined ? undefined : { cause });
};

/** Wraps any thrown value into a CharmsError (keeps CharmsErrors as they are). */
export function asCharmsError(e: unknown, code: ErrorCode = 'INTERNAL'): CharmsError {
  if (e instanceof CharmsError) return e;
  if (e instanceof Error) return new CharmsError(code, e.message, { cause: e });
  return new CharmsError(code, String(e));
}
