/**
 * A fake Internet Computer replica on loopback for tests, written from the IC interface spec
 * (not from the agent's code): it accepts CBOR call envelopes on `/api/v4/canister/<id>/call`
 * (synchronous: 200 with a certificate) and `/api/v2/canister/<id>/call` (202, then the answer
 * by `/api/v3/canister/<id>/read_state`), computes request ids by representation-independent
 * hashing, runs a scripted canister method on the candid arguments, and answers with a hash tree
 * certificate signed by its own BLS12-381 root key (the key a client must be given). Candid is
 * encoded and decoded here by hand for the Scrolls methods' types. Every request is recorded so
 * tests can check what the client sent.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bls12_381 } from '@noble/curves/bls12-381.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { decodeCbor, encodeCbor } from '../codec/cbor.js';
import { Tagged, ValueMap, type Value } from '../codec/value.js';
import { concatBytes, fromHex, utf8 } from '../util/bytes.js';

// ------------------------------------------------------------------------------ encodings

function leb128(n: bigint | number): Uint8Array {
  let v = BigInt(n);
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return Uint8Array.from(out);
}

/** Candid field id: the 32-bit `idl_hash` of the name. */
function idlHash(name: string): number {
  let h = 0;
  for (const b of utf8(name)) h = (Math.imul(h, 223) + b) >>> 0;
  return h;
}

/** Representation-independent hash of a request's content (the request id). */
function requestId(content: ValueMap): Uint8Array {
  const hashValue = (v: Value): Uint8Array => {
    if (v instanceof Uint8Array) return sha256(v);
    if (typeof v === 'string') return sha256(utf8(v));
    if (typeof v === 'bigint') return sha256(leb128(v));
    if (Array.isArray(v)) return sha256(concatBytes(...v.map(hashValue)));
    if (v instanceof ValueMap) return requestId(v);
    throw new Error(`cannot hash ${typeof v} in a request`);
  };
  const pairs = content.entries.map(([k, v]) => concatBytes(sha256(utf8(String(k))), hashValue(v)));
  pairs.sort((a, b) => Buffer.compare(a, b));
  return sha256(concatBytes(...pairs));
}

// ----------------------------------------------------------------------------------- candid

const T = { text: 0x71, nat32: 0x79, vec: 0x6d, record: 0x6c, variant: 0x6b } as const;

/** Decodes candid arguments made of text, nat32 and vectors of those. */
function decodeCandidArgs(b: Uint8Array): unknown[] {
  let p = 0;
  const byte = () => {
    if (p >= b.length) throw new Error('candid: unexpected end');
    return b[p++]!;
  };
  const leb = () => {
    let r = 0n;
    let s = 0n;
    for (;;) {
      const x = byte();
      r |= BigInt(x & 0x7f) << s;
      s += 7n;
      if (!(x & 0x80)) return r;
    }
  };
  const sleb = () => {
    let r = 0n;
    let s = 0n;
    let x: number;
    do {
      x = byte();
      r |= BigInt(x & 0x7f) << s;
      s += 7n;
    } while (x & 0x80);
    if (x & 0x40) r -= 1n << s;
    return Number(r);
  };
  if (String.fromCharCode(...b.slice(0, 4)) !== 'DIDL') throw new Error('candid: no DIDL magic');
  p = 4;
  const table: number[][] = [];
  for (let n = Number(leb()); n > 0; n--) {
    const op = sleb();
    if (op !== -19) throw new Error(`candid: type ${op} not expected in these arguments`);
    table.push([op, sleb()]);
  }
  const argTypes: number[] = [];
  for (let n = Number(leb()); n > 0; n--) argTypes.push(sleb());
  const value = (t: number): unknown => {
    if (t === -15) {
      const len = Number(leb());
      const s = new TextDecoder('utf-8', { fatal: true }).decode(b.slice(p, p + len));
      p += len;
      return s;
    }
    if (t === -7) {
      const v = new DataView(b.buffer, b.byteOffset + p, 4).getUint32(0, true);
      p += 4;
      return v;
    }
    const entry = t >= 0 ? table[t] : undefined;
    if (!entry) throw new Error(`candid: unknown type ${t}`);
    const items: unknown[] = [];
    for (let n = Number(leb()); n > 0; n--) items.push(value(entry[1]!));
    return items;
  };
  const out = argTypes.map(value);
  if (p !== b.length) throw new Error('candid: trailing bytes');
  return out;
}

const text = (s: string) => {
  const u = utf8(s);
  return concatBytes(leb128(u.length), u);
};

/** `(variant { Ok : text; Err : text })` */
export function candidTextResult(r: { Ok: string } | { Err: string }): Uint8Array {
  const fields = [
    ['Ok', idlHash('Ok')],
    ['Err', idlHash('Err')],
  ].sort((a, b) => (a[1] as number) - (b[1] as number)) as [string, number][];
  const table = concatBytes(Uint8Array.of(1, T.variant, 2), ...fields.map(([, h]) => concatBytes(leb128(h), Uint8Array.of(T.text))));
  const [name, s] = 'Ok' in r ? ['Ok', r.Ok] : ['Err', r.Err];
  return concatBytes(utf8('DIDL'), table, Uint8Array.of(1, 0), leb128(fields.findIndex(([n]) => n === name)), text(s));
}

/** `(variant { Ok : record { signature : text; script_pubkeys : vec record { nat32; text } }; Err : text })` */
export function candidAddressesResult(r: { Ok: { signature: string; scriptPubkeys: [number, string][] } } | { Err: string }): Uint8Array {
  // types: 0 variant {Ok: 1; Err: text}, 1 record {signature: text; script_pubkeys: 2}, 2 vec 3, 3 record {0: nat32; 1: text}
  const variant = [
    ['Ok', idlHash('Ok'), Uint8Array.of(1)],
    ['Err', idlHash('Err'), Uint8Array.of(T.text)],
  ].sort((a, b) => (a[1] as number) - (b[1] as number)) as [string, number, Uint8Array][];
  const record = [
    ['signature', idlHash('signature'), Uint8Array.of(T.text)],
    ['script_pubkeys', idlHash('script_pubkeys'), Uint8Array.of(2)],
  ].sort((a, b) => (a[1] as number) - (b[1] as number)) as [string, number, Uint8Array][];
  const table = concatBytes(
    Uint8Array.of(4),
    Uint8Array.of(T.variant, 2),
    ...variant.map(([, h, t]) => concatBytes(leb128(h), t)),
    Uint8Array.of(T.record, 2),
    ...record.map(([, h, t]) => concatBytes(leb128(h), t)),
    Uint8Array.of(T.vec, 3),
    Uint8Array.of(T.record, 2, 0, T.nat32, 1, T.text),
  );
  let value: Uint8Array;
  if ('Ok' in r) {
    const pairs = r.Ok.scriptPubkeys.map(([i, s]) => {
      const n = new Uint8Array(4);
      new DataView(n.buffer).setUint32(0, i, true);
      return concatBytes(n, text(s));
    });
    const vec = concatBytes(leb128(pairs.length), ...pairs);
    const fields = record.map(([name]) => (name === 'signature' ? text(r.Ok.signature) : vec));
    value = concatBytes(leb128(variant.findIndex(([n]) => n === 'Ok')), ...fields);
  } else value = concatBytes(leb128(variant.findIndex(([n]) => n === 'Err')), text(r.Err));
  return concatBytes(utf8('DIDL'), table, Uint8Array.of(1, 0), value);
}

// ------------------------------------------------------------------------- certified state

type Tree = [0] | [1, Tree, Tree] | [2, Uint8Array, Tree] | [3, Uint8Array];

const sep = (s: string) => concatBytes(Uint8Array.of(s.length), utf8(s));
function treeHash(t: Tree): Uint8Array {
  switch (t[0]) {
    case 0:
      return sha256(sep('ic-hashtree-empty'));
    case 1:
      return sha256(concatBytes(sep('ic-hashtree-fork'), treeHash(t[1]), treeHash(t[2])));
    case 2:
      return sha256(concatBytes(sep('ic-hashtree-labeled'), t[1], treeHash(t[2])));
    case 3:
      return sha256(concatBytes(sep('ic-hashtree-leaf'), t[1]));
  }
}
const treeValue = (t: Tree): Value => t.map((x) => (typeof x === 'number' ? BigInt(x) : x instanceof Uint8Array ? x : treeValue(x))) as Value;

/** Labeled children of one node, sorted by label (as the spec requires), folded into forks. */
function labeled(children: [string | Uint8Array, Tree][]): Tree {
  const nodes = children
    .map(([l, t]) => [typeof l === 'string' ? utf8(l) : l, t] as [Uint8Array, Tree])
    .sort((a, b) => Buffer.compare(a[0], b[0]))
    .map(([l, t]) => [2, l, t] as Tree);
  return nodes.reduceRight<Tree | undefined>((acc, n) => (acc ? [1, n, acc] : n), undefined) ?? [0];
}

type Outcome = { reply: Uint8Array } | { reject: { code: number; message: string } };

function statusTree(o: Outcome): Tree {
  if ('reply' in o)
    return labeled([
      ['reply', [3, o.reply]],
      ['status', [3, utf8('replied')]],
    ]);
  return labeled([
    ['error_code', [3, utf8('IC0503')]],
    ['reject_code', [3, leb128(o.reject.code)]],
    ['reject_message', [3, utf8(o.reject.message)]],
    ['status', [3, utf8('rejected')]],
  ]);
}

// ----------------------------------------------------------------------------------- server

type Method = (args: unknown[]) => Outcome;

interface RecordedCall {
  path: string;
  canisterId: string;
  methodName: string;
  args: unknown[];
  sender: Uint8Array;
  ingressExpiry: bigint;
  requestId: Uint8Array;
}

export interface FakeIcOptions {
  /** canister id (text) → method name → behaviour */
  canisters: Record<string, Record<string, Method>>;
  /** 'v4' answers calls synchronously; 'v2' makes the client fall back to async call + read_state. */
  api?: 'v4' | 'v2';
  /** Sign certificates with this key instead of the advertised root key (a forged answer). */
  forgeWithOtherKey?: boolean;
  /** A hostile replica: answers a call (any API version) with these bytes, status 200, as CBOR. */
  rawAnswer?: (path: string) => Uint8Array | undefined;
}

export interface FakeIc {
  url: string;
  /** DER-encoded BLS root key the certificates verify against. */
  rootKey: Uint8Array;
  calls: RecordedCall[];
  readStates: number;
  /** Why malformed requests were refused (a well-behaved client leaves this empty). */
  refused: string[];
  close(): Promise<void>;
}

const DER_PREFIX = fromHex('308182301d060d2b0601040182dc7c0503010201060c2b0601040182dc7c05030201036100');

/** Decodes a principal's textual form (base32 with a CRC32 prefix, dash-grouped) to its bytes. */
function principalBytes(textId: string): Uint8Array {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  let bits = 0;
  let acc = 0;
  const out: number[] = [];
  for (const c of textId.replace(/-/g, '')) {
    const v = alphabet.indexOf(c);
    if (v < 0) throw new Error(`bad principal ${textId}`);
    acc = (acc << 5) | v;
    bits += 5;
    if (bits >= 8) {
      out.push((acc >> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Uint8Array.from(out.slice(4)); // drop the CRC32
}

export async function startFakeIc(opts: FakeIcOptions): Promise<FakeIc> {
  const bls = bls12_381.shortSignatures;
  const sk = bls12_381.utils.randomSecretKey();
  const rootKey = concatBytes(DER_PREFIX, bls.getPublicKey(sk).toBytes());
  const signingKey = opts.forgeWithOtherKey ? bls12_381.utils.randomSecretKey() : sk;
  const byBytes = new Map(Object.keys(opts.canisters).map((id) => [Buffer.from(principalBytes(id)).toString('hex'), id]));
  const answers = new Map<string, Outcome>();
  const state: FakeIc = { url: '', rootKey, calls: [], readStates: 0, refused: [], close: async () => {} };

  const certificate = (tree: Tree): Uint8Array => {
    const root = treeHash(tree);
    const msg = concatBytes(sep('ic-state-root'), root);
    const sig = bls.sign(bls.hash(msg), signingKey).toBytes();
    return encodeCbor(ValueMap.of({ tree: treeValue(tree), signature: sig }));
  };
  const withTime = (children: [string | Uint8Array, Tree][]): Tree => labeled([...children, ['time', [3, leb128(BigInt(Date.now()) * 1_000_000n)]]]);

  const envelope = (body: Uint8Array): ValueMap => {
    let v = decodeCbor(body);
    if (v instanceof Tagged && v.tag === 55799n) v = v.value; // self-describe tag
    if (!(v instanceof ValueMap)) throw new Error('envelope is not a map');
    const content = v.get('content');
    if (!(content instanceof ValueMap)) throw new Error('envelope has no content');
    return content;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, body: Uint8Array) => {
    const send = (status: number, payload?: Value) => {
      const bytes = payload === undefined ? undefined : encodeCbor(payload);
      res.writeHead(status, bytes ? { 'content-type': 'application/cbor' } : {});
      res.end(bytes ? Buffer.from(bytes) : undefined);
    };
    const m = /^\/api\/(v2|v3|v4)\/canister\/([a-z0-9-]+)\/(call|read_state|query)$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !m) return send(404);
    const raw = opts.rawAnswer?.(req.url ?? '');
    if (raw) {
      res.writeHead(200, { 'content-type': 'application/cbor', 'content-length': String(raw.length) });
      return res.end(Buffer.from(raw.buffer, raw.byteOffset, raw.length));
    }
    const [, version, ecid, kind] = m as unknown as [string, string, string, string];
    if (kind === 'call' && version !== (opts.api === 'v2' ? 'v2' : 'v4')) return send(404);
    const content = envelope(body);
    const expiry = content.get('ingress_expiry');
    const sender = content.get('sender');
    if (typeof expiry !== 'bigint' || !(sender instanceof Uint8Array)) throw new Error('envelope lacks ingress_expiry or sender');
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    if (expiry < nowNs || expiry > nowNs + 6n * 60n * 1_000_000_000n) throw new Error(`ingress_expiry ${expiry} is not within the next 5 minutes`);
    if (kind === 'read_state') {
      state.readStates++;
      if (content.get('request_type') !== 'read_state') throw new Error('read_state with another request_type');
      const paths = content.get('paths');
      const rid = Array.isArray(paths) && Array.isArray(paths[0]) ? paths[0][1] : undefined;
      if (!(rid instanceof Uint8Array)) throw new Error('read_state without a request_status path');
      const o = answers.get(Buffer.from(rid).toString('hex'));
      const children: [string | Uint8Array, Tree][] = o ? [['request_status', labeled([[rid, statusTree(o)]])]] : [];
      return send(200, ValueMap.of({ certificate: certificate(withTime(children)) }));
    }
    if (kind !== 'call' || content.get('request_type') !== 'call') return send(400);
    const canister = content.get('canister_id');
    const methodName = content.get('method_name');
    const arg = content.get('arg');
    if (!(canister instanceof Uint8Array) || typeof methodName !== 'string' || !(arg instanceof Uint8Array)) throw new Error('call envelope lacks fields');
    const id = byBytes.get(Buffer.from(canister).toString('hex'));
    const rid = requestId(content);
    let outcome: Outcome;
    let args: unknown[] = [];
    if (id === undefined || id !== ecid) outcome = { reject: { code: 3, message: `Canister ${ecid} not found` } };
    else {
      const method = opts.canisters[id]?.[methodName];
      try {
        args = decodeCandidArgs(arg);
        outcome = method ? method(args) : { reject: { code: 5, message: `Canister ${id} has no update method '${methodName}'` } };
      } catch (e) {
        outcome = { reject: { code: 5, message: `Canister ${id} trapped: ${(e as Error).message}` } };
      }
      state.calls.push({ path: req.url!, canisterId: id, methodName, args, sender, ingressExpiry: expiry, requestId: rid });
    }
    answers.set(Buffer.from(rid).toString('hex'), outcome);
    if (version === 'v2') return send(202);
    const cert = certificate(withTime([['request_status', labeled([[rid, statusTree(outcome)]])]]));
    return send(200, ValueMap.of({ status: 'replied', certificate: cert }));
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, new Uint8Array(Buffer.concat(chunks))).catch((e: Error) => {
        state.refused.push(e.message);
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(`fake replica refused the request: ${e.message}`);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}
