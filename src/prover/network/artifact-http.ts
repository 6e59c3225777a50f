/**
 * The artifact store's presigned URLs (stdin uploads, proof downloads), fetched with limits a
 * hostile or broken network cannot lift:
 *  - where: https hosts on the public internet only, plus the gateway's own host (http allowed
 *    there) and the hosts the operator lists (`SVC_ARTIFACT_HOSTS`). Every other loopback,
 *    link-local or private address is refused, also when reached through a public-looking name:
 *    the name is resolved and the address actually connected to is the one checked. Redirects are
 *    followed only within the same origin; `data:`, `file:` and other schemes are refused;
 *  - how much: a byte cap per download that fits the artifact, and one budget of bytes held by all
 *    downloads in flight together;
 *  - how long: a download (or an upload's answer) that makes no progress for `stallMs` is cut, and
 *    each transfer has a total time limit.
 * Errors never carry the bytes the store answered.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';
import { CharmsError } from '../../errors.js';
import type { ArtifactHost } from '../../settings/settings.js';
import { GrpcCode, GrpcError } from './grpc.js';

import { ByteBudget } from '../../util/byte-budget.js';
export { ByteBudget };

export interface ArtifactLimits {
  /** A transfer that receives nothing for this long is cut (default 30 s). */
  stallMs: number;
  /** One transfer's total time, retries included (default 5 min). */
  totalMs: number;
  /** Shared by every download of the process unless a test gives its own. */
  budget: ByteBudget;
}

/** Proof downloads of the whole process: 128 MiB in flight (a real stage-1 proof is ~1.2 MB). */
const SHARED_DOWNLOAD_BUDGET = new ByteBudget(128 * 1024 * 1024);

export const DEFAULT_ARTIFACT_LIMITS: Readonly<ArtifactLimits> = { stallMs: 30_000, totalMs: 5 * 60_000, budget: SHARED_DOWNLOAD_BUDGET };

export interface ArtifactPolicy {
  /** The gateway's (RPC's) own host name: allowed on any port, over http too. */
  gatewayHost: string;
  /** Hosts the operator allows explicitly (`SVC_ARTIFACT_HOSTS`). */
  allowed: readonly ArtifactHost[];
}

const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv4');
// IPv4-mapped addresses are checked by BlockList as their IPv4 address; translated forms are refused whole
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv6');

/** True for an address on the public internet (not loopback, link-local, private, reserved, multicast). */
export function isPublicAddress(address: string): boolean {
  const v = isIP(address);
  if (v === 0) return false;
  return !PRIVATE.check(address, v === 4 ? 'ipv4' : 'ipv6');
}

const bareHost = (h: string): string => h.toLowerCase().replace(/^\[|\]$/g, '');
const defaultPort = (u: URL): number => (u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80);

/** Why a URL may not be fetched (the URL stays out of the message: the network chose it). */
class Refused extends Error {}

/** Checks scheme and host; returns whether the host is trusted (gateway or listed: any address). */
function vet(raw: string, policy: ArtifactPolicy): { url: URL; trusted: boolean } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Refused('it is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Refused(`its scheme ${url.protocol.slice(0, 12)} is not https`);
  if (url.username || url.password) throw new Refused('it carries credentials');
  const host = bareHost(url.hostname);
  const gateway = host === bareHost(policy.gatewayHost);
  const listed = policy.allowed.find((a) => bareHost(a.host) === host && (a.port === undefined || a.port === defaultPort(url)));
  if (url.protocol === 'http:' && !gateway && !listed?.http)
    throw new Refused('it is plain http to a host other than the gateway (list the host in SVC_ARTIFACT_HOSTS as http://host to allow it)');
  return { url, trusted: gateway || listed !== undefined };
}

/** A `lookup` for node:http that refuses non-public addresses of untrusted hosts. */
function checkedLookup(trusted: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number }, cb: (...a: unknown[]) => void): void => {
    dnsLookup(hostname, { all: true, ...(options.family ? { family: options.family } : {}) }, (err, addrs: LookupAddress[]) => {
      if (err) return cb(err);
      if (!trusted && addrs.some((a) => !isPublicAddress(a.address)))
        return cb(new Refused('its host resolves to a loopback, link-local or private address (list it in SVC_ARTIFACT_HOSTS if it is yours)'));
      if (options.all) cb(null, addrs);
      else cb(null, addrs[0]!.address, addrs[0]!.family);
    });
  };
}

export interface TransferOptions {
  method: 'GET' | 'PUT';
  body?: Uint8Array;
  /** Largest answer read (downloads); the answer of an upload is discarded. */
  maxBytes: number;
  /** Time left for this transfer. */
  timeoutMs: number;
  stallMs: number;
  budget?: ByteBudget;
  /** Names the transfer in errors ("proof download", "stdin upload"). */
  what: string;
}

const MAX_REDIRECTS = 3;

/**
 * One transfer to a presigned URL. Policy refusals and oversize answers are CharmsErrors (not
 * retried); connection failures, stalls, timeouts and 5xx are GrpcError UNAVAILABLE (retried by
 * the client within the transfer's total time).
 */
export async function transfer(raw: string, policy: ArtifactPolicy, o: TransferOptions): Promise<Uint8Array> {
  const refused = (e: Refused) =>
    new CharmsError('PROVER_TRANSIENT', `the prover network named an artifact URL for the ${o.what} that is refused: ${e.message}`, { cause: e });
  let target: { url: URL; trusted: boolean };
  try {
    target = vet(raw, policy);
  } catch (e) {
    throw e instanceof Refused ? refused(e) : e;
  }
  for (let hop = 0; ; hop++) {
    const { url, trusted } = target;
    if (!trusted && isIP(bareHost(url.hostname)) && !isPublicAddress(bareHost(url.hostname)))
      throw refused(new Refused('its host is a loopback, link-local or private address (list it in SVC_ARTIFACT_HOSTS if it is yours)'));
    let r: { status: number; location?: string | undefined; body: Uint8Array };
    try {
      r = await once(url, trusted, o);
    } catch (e) {
      if (e instanceof Refused) throw refused(e);
      throw e;
    }
    if (r.status >= 300 && r.status < 400 && r.location !== undefined) {
      if (hop >= MAX_REDIRECTS) throw new CharmsError('PROVER_TRANSIENT', `the ${o.what} was redirected more than ${MAX_REDIRECTS} times: refused`);
      let next: URL;
      try {
        next = new URL(r.location, url);
      } catch {
        throw new CharmsError('PROVER_TRANSIENT', `the ${o.what} was redirected to something that is not a URL: refused`);
      }
      if (next.origin !== url.origin) throw new CharmsError('PROVER_TRANSIENT', `the ${o.what} was redirected to another host: refused`);
      target = { url: next, trusted };
      continue;
    }
    if (r.status < 200 || r.status > 299)
      throw new GrpcError(r.status >= 500 ? GrpcCode.UNAVAILABLE : GrpcCode.NOT_FOUND, `${o.what} answered HTTP ${r.status}`, `${o.method} artifact`);
    return r.body;
  }
}

function once(url: URL, trusted: boolean, o: TransferOptions): Promise<{ status: number; location?: string | undefined; body: Uint8Array }> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === 'https:' ? https : http;
    let taken = 0;
    let done = false;
    const chunks: Buffer[] = [];
    const finish = (e: Error | undefined, v?: { status: number; location?: string | undefined; body: Uint8Array }) => {
      if (done) return;
      done = true;
      clearTimeout(total);
      clearTimeout(stall);
      o.budget?.give(taken);
      taken = 0;
      if (e) {
        req.destroy();
        reject(e);
      } else resolve(v!);
    };
    const unavailable = (why: string) => new GrpcError(GrpcCode.UNAVAILABLE, `${o.what} ${why}`, `${o.method} artifact`);
    const total = setTimeout(() => finish(unavailable(`did not finish within ${o.timeoutMs} ms`)), Math.max(1, o.timeoutMs));
    let stall: NodeJS.Timeout | undefined;
    const progress = () => {
      clearTimeout(stall);
      stall = setTimeout(() => finish(unavailable(`made no progress for ${o.stallMs} ms`)), o.stallMs);
    };
    const req = mod.request(url, {
      method: o.method,
      lookup: checkedLookup(trusted) as never,
      headers: o.body ? { 'content-length': String(o.body.length) } : {},
    });
    req.on('error', (e) => finish(e instanceof Refused ? e : unavailable(`failed: ${(e as NodeJS.ErrnoException).code ?? 'connection error'}`)));
    req.on('finish', progress); // the request is sent: from now on the store must keep answering
    req.on('response', (res) => {
      progress();
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location !== undefined) {
        res.resume();
        return finish(undefined, { status, location: res.headers.location, body: new Uint8Array() });
      }
      const keep = o.method === 'GET' && status >= 200 && status <= 299;
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (keep && declared > o.maxBytes)
        return finish(new CharmsError('PROVER_TRANSIENT', `the ${o.what} declares ${declared} bytes, over the limit of ${o.maxBytes}: refused`));
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (done) return;
        progress();
        size += c.length;
        if (!keep) {
          if (size > 64 * 1024) finish(unavailable('answered too much'));
          return;
        }
        if (size > o.maxBytes) return finish(new CharmsError('PROVER_TRANSIENT', `the ${o.what} is over the limit of ${o.maxBytes} bytes: refused`));
        if (o.budget && !o.budget.tryTake(c.length))
          return finish(
            new CharmsError('PROVER_TRANSIENT', `too many proof bytes are being downloaded at once (over ${o.budget.max}): retry the request later`),
          );
        taken += o.budget ? c.length : 0;
        chunks.push(c);
      });
      res.on('end', () => {
        const all = Buffer.concat(chunks);
        finish(undefined, { status, body: keep ? new Uint8Array(all.buffer, all.byteOffset, all.length) : new Uint8Array() });
      });
      res.on('error', () => finish(unavailable('broke off')));
    });
    req.end(o.body ? Buffer.from(o.body.buffer, o.body.byteOffset, o.body.length) : undefined);
  });
}
