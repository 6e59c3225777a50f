/**
 * Credentials in URLs never leave the process: every URL that is logged, put in an error message
 * or returned to a caller goes through `redactUrl` / `redactText`, and code that talks to a URL
 * with credentials sends them as an `Authorization` header (`withoutCredentials`), since `fetch`
 * refuses such URLs and would echo them in its error.
 */

const REDACTED = 'REDACTED';

/** Query parameters whose values are secrets (`?key=`, `?token=`, `?api_key=`, …). */
const SECRET_PARAM =
  /^(x-)?(key|api[-_]?key|apikey|token|access[-_]?token|auth|authorization|pass|passwd|password|secret|client[-_]?secret|private[-_]?key|sig|signature|jwt|session)$/i;

/**
 * A path segment that looks like an API key (hosted RPCs put keys in the path, e.g. `/v3/<key>`):
 * 20+ URL-safe characters mixing letters and digits. A 64-hex segment is a txid or hash (public)
 * and is kept so logs stay useful.
 */
const tokenLike = (seg: string): boolean =>
  seg.length >= 20 && /^[A-Za-z0-9._~-]+$/.test(seg) && /[0-9]/.test(seg) && /[A-Za-z]/.test(seg) && !/^[0-9a-fA-F]{64}$/.test(seg);

/** The URL with user-info, secret query values and key-like path segments replaced by REDACTED. */
export function redactUrl(u: string | URL): string {
  let url: URL;
  try {
    url = new URL(String(u));
  } catch {
    return '(unparsable URL)';
  }
  if (url.username || url.password) {
    url.username = REDACTED;
    url.password = '';
  }
  for (const k of [...url.searchParams.keys()]) if (SECRET_PARAM.test(k)) url.searchParams.set(k, REDACTED);
  url.pathname = url.pathname
    .split('/')
    .map((s) => (tokenLike(s) ? REDACTED : s))
    .join('/');
  return url.toString();
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

/** Free text (an error message, a log line) with every URL in it redacted. */
export const redactText = (s: string): string => s.replace(URL_IN_TEXT, (m) => redactUrl(m));

/**
 * A file path of this machine in free text: under a root where files of a host live (a home, a
 * data or temporary directory, ...), `~/…`, or a Windows drive. An API route (`/v1/…`,
 * `/spells/…`) is not one.
 */
const LOCAL_PATH =
  /(?<![\w.~/-])(?:~\/|[A-Za-z]:\\|\/(?:home|root|Users|var|tmp|etc|usr|opt|srv|data|mnt|media|run|private|nix|snap|proc|sys|dev|work|workspace|app|bitcoin|scratch)(?=\/|[\s"'`,;:)]|$))[^\s"'`,;:)]*/g;

/**
 * Free text for an answer to a client: URLs redacted, and this machine's file paths (a cookie
 * file, a database, a data directory) replaced by `<path>`. The logs keep them (`redactText`).
 */
export const publicText = (s: string): string => redactText(s).replace(LOCAL_PATH, '<path>');

/**
 * Splits `scheme://user:password@host/…` into the URL without user-info and the matching
 * `Authorization: Basic …` header value (undefined when the URL has no credentials).
 */
export function withoutCredentials(u: string): { url: string; authorization: string | undefined } {
  const url = new URL(u);
  if (!url.username && !url.password) return { url: url.toString(), authorization: undefined };
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return { url: url.toString(), authorization: `Basic ${Buffer.from(pair).toString('base64')}` };
}
