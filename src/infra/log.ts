/**
 * Structured logs: one JSON object per line on stderr, filtered by `LOG_LEVEL`. Fields whose
 * names look secret (keys, passwords, tokens) are redacted, and so are credentials in any URL
 * inside the message or a string field.
 */
import { redactText } from '../util/redact.js';
import { logLevelOf, type Env, type LogLevel } from '../settings/settings.js';

type Level = LogLevel;
const ORDER: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3, trace: 4 };
const SECRET = /private_?key|secret|password|token|authorization/i;

export interface Logger {
  error(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
  /** A warning shown at every `LOG_LEVEL`, `error` included (mock mode: never to be missed); level `warn` in the line. */
  warnAlways(msg: string, fields?: Record<string, unknown>): void;
}

function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields))
    out[k] = SECRET.test(k) ? '[redacted]' : typeof v === 'bigint' ? v.toString() : typeof v === 'string' ? redactText(v) : v;
  return out;
}

/** A logger at `level` (from `Settings.logLevel`), or at the `LOG_LEVEL` of `env`. */
export function createLogger(level: LogLevel | Env = process.env, write: (line: string) => void = (l) => void process.stderr.write(l)): Logger {
  const max = ORDER[typeof level === 'string' ? level : logLevelOf(level)];
  const log =
    (level: Level, always = false) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (!always && ORDER[level] > max) return;
      write(JSON.stringify({ time: new Date().toISOString(), level, msg: redactText(msg), ...redact(fields) }) + '\n');
    };
  return { error: log('error'), warn: log('warn'), info: log('info'), debug: log('debug'), warnAlways: log('warn', true) };
}

export const silentLogger: Logger = { error() {}, warn() {}, info() {}, debug() {}, warnAlways() {} };

/**
 * A logger for a command's stderr: `info` as the message itself, `warn` and `error` prefixed
 * `warning: ` and `error: `, one line each; `debug` dropped. What one-shot commands hand the
 * prover and the runner, so their progress reads as plain lines (servers use `createLogger`).
 */
export function lineLogger(write: (line: string) => void = (l) => void process.stderr.write(l)): Logger {
  return {
    error: (msg) => write(`error: ${msg}\n`),
    warn: (msg) => write(`warning: ${msg}\n`),
    warnAlways: (msg) => write(`warning: ${msg}\n`),
    info: (msg) => write(`${msg}\n`),
    debug() {},
  };
}
