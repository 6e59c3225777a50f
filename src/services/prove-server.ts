/**
 * The proving service's HTTP surface: `POST /spells/prove` (JSON or CBOR by Content-Type, answer
 * in the same format) and `GET /ready`. Errors are JSON `{error, code}`, status by error code.
 */
import { createHash } from 'node:crypto';
import { CharmsError } from '../errors.js';
import { errorResponse, jsonError, listenDual, type Listening, type Res } from './http.js';
import type { ProofCache } from './cache.js';
import { silentLogger, type Logger } from './log.js';
import { proveResponseNotice } from '../prover/service.js';
import { DEFAULT_LIMITS, type ServerLimits } from '../settings/limits.js';

const BODY_LIMIT = DEFAULT_LIMITS.maxBodyBytes;

export type ProveFn = (req: { body: Uint8Array; format: 'json' | 'cbor' }) => Promise<Uint8Array>;

export async function startProveServer(opts: {
  host?: string;
  port?: number;
  prove: ProveFn;
  ready: () => Promise<boolean>;
  cache?: ProofCache;
  log?: Logger;
  /** Connection, timeout and body limits (defaults: services/limits.ts). */
  limits?: Partial<ServerLimits>;
}): Promise<Listening> {
  const log = opts.log ?? silentLogger;
  const limit = opts.limits?.maxBodyBytes ?? BODY_LIMIT;
  return listenDual(
    async (req) => {
      const t0 = performance.now();
      let res: Res;
      try {
        if (req.path === '/ready' && req.method === 'GET') {
          const ok = await opts.ready().catch(() => false);
          res = { status: ok ? 200 : 503, headers: { 'content-type': 'text/plain' }, body: ok ? 'OK' : 'NOT READY' };
        } else if (req.path === '/spells/prove' && req.method === 'POST') {
          const ct = String(req.headers['content-type'] ?? '');
          const format = ct.includes('application/cbor') ? 'cbor' : 'json';
          const body = await req.body(limit);
          const run = () => opts.prove({ body, format });
          const key = createHash('sha256').update(`${format}:`).update(body).digest('hex');
          const out = opts.cache ? await opts.cache.getOrCompute(key, run) : await run();
          res = {
            status: 200,
            headers: { 'content-type': format === 'cbor' ? 'application/cbor' : 'application/json', ...proveResponseNotice(out, format) },
            body: out,
          };
        } else if (req.path === '/spells/prove' || req.path === '/ready') {
          res = jsonError(405, 'INVALID_INPUT', `method ${req.method} not allowed on ${req.path}`);
        } else res = errorResponse(new CharmsError('NOT_FOUND', `no route for ${req.method} ${req.path}`), log);
      } catch (e) {
        res = errorResponse(e, log);
      }
      log.info('request', { method: req.method, path: req.path, status: res.status, ms: Math.round(performance.now() - t0) });
      return res;
    },
    { host: opts.host ?? '0.0.0.0', port: opts.port ?? 17784, ...(opts.limits ? { limits: opts.limits } : {}) },
  );
}
