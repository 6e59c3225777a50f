/**
 * The one Bitcoin Core client, with two transports: JSON-RPC over HTTP (`BITCOIN_RPC_URL`, used by
 * the spell-query service and `wallet list`) and the `bitcoin-cli` program (`BITCOIN_CLI`, what
 * the reference's `wallet list` runs). Both map failures the same way:
 *
 * - RPC error -5 (unknown transaction / address) → NOT_FOUND;
 * - no answer at all (connection refused, timeout, unreadable cookie, missing program) →
 *   UPSTREAM_UNAVAILABLE (503);
 * - any other failure answer → UPSTREAM_FAILED (502).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CharmsError } from '../errors.js';
import type { NodeClientConfig, SourceConfig } from '../settings/settings.js';
import { redactText, redactUrl } from '../util/redact.js';

export interface BitcoinNode {
  readonly name: string;
  /** Calls an RPC method; resolves with its `result`. */
  call(method: string, params: readonly unknown[]): Promise<unknown>;
}

/**
 * Most bytes read from one answer: a transaction is at most 4 MB (8 MB as hex), plus room for the
 * JSON-RPC envelope. A larger answer is refused while it streams in, never buffered whole.
 */
export const SOURCE_ANSWER_LIMIT = 9 * 1024 * 1024;

/** UPSTREAM_UNAVAILABLE for a request that got no answer. */
export function unreachable(what: string, e: unknown): CharmsError {
  const inner = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  const reason = inner instanceof Error ? (inner.name === 'TimeoutError' ? 'timed out' : inner.message) : String(inner);
  return new CharmsError('UPSTREAM_UNAVAILABLE', redactText(`${what} is unreachable: ${reason}`), { cause: e });
}

/**
 * Whether a request failed because the server closed its connection before answering: the race
 * of every keep-alive client, when a server drops an idle connection just as a request is sent on
 * it (a refused connection or a timeout is not this).
 */
function closedBeforeAnswer(e: unknown): boolean {
  const code = e instanceof Error && e.cause instanceof Error ? (e.cause as { code?: unknown }).code : undefined;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

/**
 * `fetch`, sent once more on a fresh connection when the first was closed before any answer.
 * Only for requests that change nothing when repeated (reads); the caller's timeout signal
 * bounds both tries together.
 */
export async function fetchRead(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (e) {
    if (!closedBeforeAnswer(e) || init.signal?.aborted) throw e;
    return fetch(url, init);
  }
}

/** The answer's bytes, reading at most `limit` bytes (declared or received); UPSTREAM_FAILED past it. */
export async function readCappedBytes(res: Response, what: string, limit: number, larger = 'larger than any transaction'): Promise<Uint8Array> {
  const tooBig = () => new CharmsError('UPSTREAM_FAILED', `${what} answered more than ${limit} bytes, ${larger}: refused`);
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > limit) {
    await res.body?.cancel().catch(() => {});
    throw tooBig();
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooBig();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** The answer's text, reading at most `limit` bytes (declared or received); UPSTREAM_FAILED past it. */
async function readCapped(res: Response, what: string, limit: number, larger?: string): Promise<string> {
  return Buffer.from(await readCappedBytes(res, what, limit, larger)).toString('utf8');
}

/** A URL as shown in names and messages: redacted, without a trailing slash. */
export const shownUrl = (u: string): string => redactUrl(u).replace(/\/(?=$|\?)/, '');

/** The error object of a JSON-RPC answer, kept as the cause of the CharmsError it becomes. */
class RpcFailure extends Error {
  constructor(
    readonly rpcCode: number | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'RpcFailure';
  }
}

/** The JSON-RPC error code behind an error (e.g. -8 for a height out of range), if it came from one. */
export const rpcCodeOf = (e: unknown): number | undefined => (e instanceof Error && e.cause instanceof RpcFailure ? e.cause.rpcCode : undefined);

/** An RPC error answer as a CharmsError (-5: NOT_FOUND); the RPC code stays readable through `rpcCodeOf`. */
function rpcError(name: string, method: string, code: number | undefined, message: string | undefined): CharmsError {
  const cause = new RpcFailure(code, redactText(message ?? ''));
  if (code === -5) return new CharmsError('NOT_FOUND', `${method}: ${message ?? 'not found'}`, { cause });
  return new CharmsError('UPSTREAM_FAILED', redactText(`${name} error ${code ?? '?'} in ${method}: ${message ?? ''}`), { cause });
}

/**
 * The RPC methods that only read, and so are sent once more after a connection closed before the
 * answer: an allow-list, so that a method that changes something (a broadcast, any wallet call)
 * is never repeated, including one added later.
 */
const READ_METHODS: ReadonlySet<string> = new Set([
  'estimatesmartfee',
  'getblock',
  'getblockchaininfo',
  'getblockcount',
  'getblockhash',
  'getblockheader',
  'getmempoolentry',
  'getrawmempool',
  'getrawtransaction',
  'listunspent',
]);

/** Bitcoin Core JSON-RPC over HTTP. */
export class RpcNode implements BitcoinNode {
  readonly name: string;
  /** `auth` returns `user:password` (or undefined for none); it is called for every request. */
  constructor(
    /** The endpoint, without credentials. */
    readonly url: string,
    /** Called for every request (a cookie file is re-read); also used by the REST transport. */
    readonly auth: () => string | undefined,
    readonly timeoutMs = 10_000,
    private readonly answerLimit = SOURCE_ANSWER_LIMIT,
  ) {
    this.name = `bitcoind ${shownUrl(url)}`;
  }

  /** `answerLimit` overrides the per-answer byte limit for this call (a large mempool list). */
  async call(method: string, params: readonly unknown[], answerLimit = this.answerLimit): Promise<unknown> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const auth = this.auth();
    if (auth !== undefined) headers.authorization = `Basic ${Buffer.from(auth).toString('base64')}`;
    let res: Response;
    let text: string;
    try {
      // reads only: a broadcast sent twice would answer "already known", a wallet call act twice
      res = await (READ_METHODS.has(method) ? fetchRead : fetch)(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '1.0', id: 'charms', method, params }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await readCapped(res, this.name, answerLimit);
    } catch (e) {
      if (e instanceof CharmsError) throw e;
      throw unreachable(this.name, e);
    }
    if (res.status === 401 || res.status === 403)
      throw new CharmsError(
        'UPSTREAM_FAILED',
        auth === undefined
          ? `${this.name} asks for RPC credentials (${res.status}) and none were given: name bitcoind's cookie file with --rpc-cookie or BITCOIN_RPC_COOKIE (<datadir>/.cookie), set BITCOIN_RPC_USER and BITCOIN_RPC_PASSWORD, or put them in the URL (http://user:password@host:port)`
          : `${this.name} refused the RPC credentials (${res.status}): check the cookie file (bitcoind writes a new one at each start) or BITCOIN_RPC_USER/BITCOIN_RPC_PASSWORD (its rpcauth)`,
      );
    let body: { result?: unknown; error?: { code?: number; message?: string } | null };
    try {
      body = JSON.parse(text) as typeof body;
    } catch (e) {
      throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered ${res.status} without JSON`, { cause: e });
    }
    if (body === null || typeof body !== 'object') throw new CharmsError('UPSTREAM_FAILED', `${this.name} answered ${res.status} without a JSON-RPC object`);
    if (body.error) throw rpcError(this.name, method, body.error.code, body.error.message);
    return body.result;
  }
}

/** Bitcoin Core RPC from `BITCOIN_RPC_URL` + cookie or user/password (or credentials in the URL); undefined without a URL. */
export function rpcNodeFromConfig(c: SourceConfig): RpcNode | undefined {
  if (!c.rpcUrl) return undefined;
  const { rpcCookie, rpcUser, rpcPassword } = c;
  let url: URL;
  try {
    url = new URL(c.rpcUrl);
  } catch (e) {
    throw new CharmsError('CONFIG', `BITCOIN_RPC_URL: not a URL: ${redactText(c.rpcUrl)}`, { cause: e });
  }
  // credentials in the URL (http://user:pass@host:port) are honoured too
  const inUrl = url.username ? `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` : undefined;
  url.username = '';
  url.password = '';
  return new RpcNode(
    url.toString(),
    () => {
      if (rpcCookie) {
        try {
          return readFileSync(rpcCookie, 'utf8').trim();
        } catch (e) {
          // bitcoind deletes its cookie when it stops: treat as unreachable
          // the path in the cause only: the logs show it, answers to clients (the top message) do not
          throw new CharmsError('UPSTREAM_UNAVAILABLE', 'cannot read the RPC cookie file (--rpc-cookie, BITCOIN_RPC_COOKIE): is bitcoind running?', {
            cause: new CharmsError('IO', `${rpcCookie}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e }),
          });
        }
      }
      if (rpcUser !== undefined) return `${rpcUser}:${rpcPassword ?? ''}`;
      return inUrl;
    },
    c.timeoutMs,
  );
}

/**
 * The `bitcoin-cli` program (`BITCOIN_CLI`, extra arguments such as `-testnet4` from
 * `BITCOIN_CLI_ARGS` first). Parameters are passed as bitcoin-cli does: strings as they are, the
 * rest as JSON. A JSON answer is parsed; a bare string answer (a transaction's hex) is returned as is.
 */
export class CliNode implements BitcoinNode {
  readonly name: string;
  constructor(
    private readonly config: NodeClientConfig,
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly answerLimit = 256 * 1024 * 1024,
  ) {
    this.name = config.bin;
  }

  call(method: string, params: readonly unknown[]): Promise<unknown> {
    const args = [...this.config.args, method, ...params.map((p) => (typeof p === 'string' ? p : JSON.stringify(p)))];
    return new Promise((resolve, reject) => {
      execFile(this.config.bin, args, { encoding: 'utf8', env: this.env, maxBuffer: this.answerLimit }, (err, stdout, stderr) => {
        if (err) {
          const code = (err as NodeJS.ErrnoException).code;
          if (typeof code === 'string') {
            // the program did not run (ENOENT, EACCES) or its answer was too large
            if (code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER')
              return reject(new CharmsError('UPSTREAM_FAILED', `${this.name} ${method}: answer larger than ${this.answerLimit} bytes`, { cause: err }));
            // no cause: its message ("spawn <bin> ENOENT") would say the program and the code again
            return reject(
              new CharmsError(
                'UPSTREAM_UNAVAILABLE',
                `cannot run ${this.name}: ${code}${code === 'ENOENT' ? ' (install Bitcoin Core or set BITCOIN_CLI)' : ''}`,
              ),
            );
          }
          // bitcoin-cli reports an RPC error as "error code: N" then "error message:" and the text
          const lines = stderr.trim().split('\n');
          const rpc = /^error code: (-?\d+)/.exec(lines[0] ?? '');
          const at = lines.indexOf('error message:');
          if (rpc) return reject(rpcError(this.name, method, Number(rpc[1]), at >= 0 ? lines.slice(at + 1).join(' ') : undefined));
          return reject(
            new CharmsError('UPSTREAM_FAILED', redactText(`${this.name} ${method} failed: ${lines[0] || `exit status ${String(err.code)}`}`), { cause: err }),
          );
        }
        const out = stdout.trim();
        if (out.startsWith('[') || out.startsWith('{') || out.startsWith('"')) {
          try {
            return resolve(JSON.parse(out));
          } catch (e) {
            return reject(new CharmsError('UPSTREAM_FAILED', `${this.name} ${method} did not answer JSON`, { cause: e }));
          }
        }
        resolve(out);
      });
    });
  }
}

/** The node `wallet list` talks to: Bitcoin Core RPC when `BITCOIN_RPC_URL` is set, else `bitcoin-cli`. */
export function walletNodeOf(source: SourceConfig, cli: NodeClientConfig, env: NodeJS.ProcessEnv): BitcoinNode {
  return rpcNodeFromConfig(source) ?? new CliNode(cli, env);
}
