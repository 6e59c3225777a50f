/**
 * The protobuf messages of the SP1 Prover Network (SDK 6.3.0, `network.ProverNetwork` and
 * `artifact.ArtifactStore`), hand-encoded. Signed bodies must be *canonical* proto3 — fields in tag
 * order, implicit-presence defaults (0, "", false, empty bytes) omitted, `optional` fields written
 * only when set — because the server checks a signature over its own re-encoding of the body.
 * (protobufjs writes explicitly set defaults, which breaks that.) Field tags: see
 * ../shared/protocol/sp1-proving.md §1.3; golden tests against `protoc --encode`.
 */
import { CharmsError } from '../../errors.js';
import { ByteWriter } from '../../util/byte-io.js';

// ------------------------------------------------------------------------------- enums

const MessageFormat = { BINARY: 1, JSON: 2 } as const;
export const ProofMode = { CORE: 1, COMPRESSED: 2, PLONK: 3, GROTH16: 4 } as const;
export type ProofModeValue = (typeof ProofMode)[keyof typeof ProofMode];
export const FulfillmentStrategy = { HOSTED: 1, RESERVED: 2, AUCTION: 3 } as const;
export const FulfillmentStatus = { REQUESTED: 1, ASSIGNED: 2, FULFILLED: 3, UNFULFILLABLE: 4, REVERTED: 5, EXPIRED: 6 } as const;
export const ExecutionStatus = { UNEXECUTED: 1, EXECUTED: 2, UNEXECUTABLE: 3, VALIDATION_FAILED: 4 } as const;
export const ArtifactType = { PROGRAM: 1, STDIN: 2, PROOF: 3 } as const;

// ------------------------------------------------------------------------------- writer

const WIRE_VARINT = 0;
const WIRE_LEN = 2;

export class ProtoWriter {
  private readonly out = new ByteWriter();
  private varint(v: bigint): void {
    if (v < 0n) v = BigInt.asUintN(64, v);
    while (v > 0x7fn) {
      this.out.byte(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.out.byte(Number(v));
  }
  private key(tag: number, wire: number): void {
    this.varint(BigInt((tag << 3) | wire));
  }
  private len(tag: number, b: Uint8Array): void {
    this.key(tag, WIRE_LEN);
    this.varint(BigInt(b.length));
    this.out.bytes(b);
  }
  /** uint64 / enum / bool, omitted when zero (implicit presence). */
  uint(tag: number, v: bigint | number | boolean): this {
    const n = typeof v === 'boolean' ? (v ? 1n : 0n) : BigInt(v);
    if (n !== 0n) {
      this.key(tag, WIRE_VARINT);
      this.varint(n);
    }
    return this;
  }
  /** bytes / string / sub-message, omitted when empty (implicit presence). */
  bytes(tag: number, b: Uint8Array | string): this {
    const v = typeof b === 'string' ? new TextEncoder().encode(b) : b;
    if (v.length > 0) this.len(tag, v);
    return this;
  }
  /** An `optional` or message field: written whenever present, even when empty. */
  present(tag: number, b: Uint8Array | string | undefined): this {
    if (b !== undefined) this.len(tag, typeof b === 'string' ? new TextEncoder().encode(b) : b);
    return this;
  }
  repeatedBytes(tag: number, list: readonly Uint8Array[]): this {
    for (const b of list) this.len(tag, b);
    return this;
  }
  finish(): Uint8Array {
    return this.out.finish();
  }
}

// ------------------------------------------------------------------------------- reader

export type FieldValue = bigint | Uint8Array;

const malformed = (what: string): CharmsError => new CharmsError('UPSTREAM_FAILED', `malformed protobuf from the prover network: ${what}`);

/**
 * Parses a message into tag → values (varints as bigint, length-delimited as views of `b`).
 * With `known`, every other field is stepped over without being materialized — no value, no list
 * entry, no BigInt — so padding a reply with unknown fields costs a scan, not memory; without it,
 * unknown tags are kept. fixed32/64 fields are always skipped.
 */
export function parseMessage(b: Uint8Array, known?: ReadonlySet<number>): Map<number, FieldValue[]> {
  const out = new Map<number, FieldValue[]>();
  let pos = 0;
  const end = b.length;
  /** A varint as a number (keys and lengths: at most 2^53, more is malformed). */
  const small = (what: string): number => {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      if (pos >= end) throw malformed(`truncated ${what}`);
      const x = b[pos++]!;
      v += (x & 0x7f) * mul;
      if ((x & 0x80) === 0) return v;
      mul *= 128;
    }
    throw malformed(`${what} too large`);
  };
  const skipVarint = (): void => {
    for (let i = 0; i < 10; i++) {
      if (pos >= end) throw malformed('truncated varint');
      if ((b[pos++]! & 0x80) === 0) return;
    }
    throw malformed('varint too long');
  };
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (pos >= end) throw malformed('truncated varint');
      const x = b[pos++]!;
      v |= BigInt(x & 0x7f) << shift;
      if ((x & 0x80) === 0) return BigInt.asUintN(64, v);
    }
    throw malformed('varint too long');
  };
  while (pos < end) {
    const k = small('field key');
    const tag = Math.floor(k / 8);
    const wire = k % 8;
    if (tag === 0) throw malformed('field tag 0');
    const keep = known === undefined || known.has(tag);
    let v: FieldValue;
    if (wire === WIRE_VARINT) {
      if (!keep) {
        skipVarint();
        continue;
      }
      v = varint();
    } else if (wire === WIRE_LEN) {
      const n = small('length');
      if (n > end - pos) throw malformed('length past the end');
      pos += n;
      if (!keep) continue;
      v = b.subarray(pos - n, pos);
    } else if (wire === 1 || wire === 5) {
      const n = wire === 1 ? 8 : 4;
      if (n > end - pos) throw malformed('truncated fixed field');
      pos += n;
      continue;
    } else throw malformed(`unsupported wire type ${wire}`);
    const list = out.get(tag);
    if (list) list.push(v);
    else out.set(tag, [v]);
  }
  return out;
}

const tagSets = new Map<string, ReadonlySet<number>>();
/** The set of tags 1..n (cached): the fields a reply message of ours has. */
export const tagsUpTo = (n: number): ReadonlySet<number> => {
  const k = String(n);
  let t = tagSets.get(k);
  if (!t) tagSets.set(k, (t = new Set(Array.from({ length: n }, (_, i) => i + 1))));
  return t;
};

/** Typed access to a parsed message (last value wins for singular fields, as protobuf says). */
export class ProtoFields {
  constructor(readonly fields: Map<number, FieldValue[]>) {}
  /** `known`: the tags to keep; others are skipped unread (replies from the network). */
  static parse(b: Uint8Array, known?: ReadonlySet<number>): ProtoFields {
    return new ProtoFields(parseMessage(b, known));
  }
  private last(tag: number): FieldValue | undefined {
    const l = this.fields.get(tag);
    return l?.[l.length - 1];
  }
  uint(tag: number): bigint {
    const v = this.last(tag);
    if (v === undefined) return 0n;
    if (typeof v !== 'bigint') throw malformed(`field ${tag} is not a varint`);
    return v;
  }
  bool(tag: number): boolean {
    return this.uint(tag) !== 0n;
  }
  bytes(tag: number): Uint8Array {
    const v = this.last(tag);
    if (v === undefined) return new Uint8Array();
    if (typeof v === 'bigint') throw malformed(`field ${tag} is not length-delimited`);
    return v;
  }
  optBytes(tag: number): Uint8Array | undefined {
    return this.has(tag) ? this.bytes(tag) : undefined;
  }
  string(tag: number): string {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(this.bytes(tag));
    } catch {
      throw malformed(`field ${tag} is not UTF-8`);
    }
  }
  optString(tag: number): string | undefined {
    return this.has(tag) ? this.string(tag) : undefined;
  }
  message(tag: number, known?: ReadonlySet<number>): ProtoFields {
    return ProtoFields.parse(this.bytes(tag), known);
  }
  repeatedBytes(tag: number): Uint8Array[] {
    return (this.fields.get(tag) ?? []).map((v) => {
      if (typeof v === 'bigint') throw malformed(`field ${tag} is not length-delimited`);
      return v;
    });
  }
  has(tag: number): boolean {
    return this.fields.has(tag);
  }
}

// ------------------------------------------------------------------------------- messages

export type NetworkVariant = 'auction' | 'base';

/** `RequestProofRequestBody`: the auction variant (public network) or the base one (reserved / self-hosted). */
export interface RequestProofBody {
  nonce: bigint;
  vkHash: Uint8Array;
  version: string;
  mode: ProofModeValue;
  strategy: number;
  stdinUri: string;
  deadline: bigint;
  cycleLimit: bigint;
  gasLimit: bigint;
  minAuctionPeriod: bigint;
  whitelist: Uint8Array[];
  /** Auction-only fields (tags 12–20). */
  auction?: {
    domain: Uint8Array;
    auctioneer: Uint8Array;
    executor: Uint8Array;
    verifier: Uint8Array;
    publicValuesHash?: Uint8Array;
    baseFee: string;
    maxPricePerPgu: string;
    variant: number;
    treasury: Uint8Array;
  };
  stdinPrivate: boolean;
}

export function encodeRequestProofBody(b: RequestProofBody): Uint8Array {
  const w = new ProtoWriter()
    .uint(1, b.nonce)
    .bytes(2, b.vkHash)
    .bytes(3, b.version)
    .uint(4, b.mode)
    .uint(5, b.strategy)
    .bytes(6, b.stdinUri)
    .uint(7, b.deadline)
    .uint(8, b.cycleLimit)
    .uint(9, b.gasLimit)
    .uint(10, b.minAuctionPeriod)
    .repeatedBytes(11, b.whitelist);
  const a = b.auction;
  if (a) {
    w.bytes(12, a.domain)
      .bytes(13, a.auctioneer)
      .bytes(14, a.executor)
      .bytes(15, a.verifier)
      .present(16, a.publicValuesHash)
      .bytes(17, a.baseFee)
      .bytes(18, a.maxPricePerPgu)
      .uint(19, a.variant)
      .bytes(20, a.treasury)
      .uint(21, b.stdinPrivate);
  } else w.uint(12, b.stdinPrivate);
  return w.finish();
}

export const encodeCancelBody = (nonce: bigint, requestId: Uint8Array): Uint8Array => new ProtoWriter().uint(1, nonce).bytes(2, requestId).finish();

/** `{1 format, 2 signature, 3 body}`: the envelope of RequestProof, CancelRequest and CreateProgram. */
export const encodeSigned = (signature: Uint8Array, body: Uint8Array): Uint8Array =>
  new ProtoWriter().uint(1, MessageFormat.BINARY).bytes(2, signature).present(3, body).finish();

export const encodeAddressRequest = (address: Uint8Array): Uint8Array => new ProtoWriter().bytes(1, address).finish();
export const encodeVkHashRequest = (vkHash: Uint8Array): Uint8Array => new ProtoWriter().bytes(1, vkHash).finish();
export const encodeParamsRequest = (mode: ProofModeValue): Uint8Array => new ProtoWriter().uint(1, mode).finish();
export const encodeProversByUptimeRequest = (haOnly: boolean): Uint8Array => new ProtoWriter().uint(1, haOnly).finish();
export const encodeCreateArtifactRequest = (signature: Uint8Array, type: number): Uint8Array => new ProtoWriter().bytes(1, signature).uint(2, type).finish();
export const encodeStatusRequest = (requestId: Uint8Array): Uint8Array => new ProtoWriter().bytes(1, requestId).finish();

export interface ProofRequestParams {
  domain: Uint8Array;
  auctioneer: Uint8Array;
  executor: Uint8Array;
  verifier: Uint8Array;
  maxPricePerPgu: string;
  baseFee: string;
  treasury: Uint8Array;
  tickSize: bigint;
}

export function decodeParams(b: Uint8Array): ProofRequestParams {
  const f = ProtoFields.parse(b, tagsUpTo(8));
  return {
    domain: f.bytes(1),
    auctioneer: f.bytes(2),
    executor: f.bytes(3),
    verifier: f.bytes(4),
    maxPricePerPgu: f.string(5),
    baseFee: f.string(6),
    treasury: f.bytes(7),
    tickSize: f.uint(8),
  };
}

export interface ProgramInfo {
  vkHash: Uint8Array;
  vk: Uint8Array;
  programUri: string;
  name?: string;
  owner: Uint8Array;
  createdAt: bigint;
}

export function decodeProgram(b: Uint8Array): ProgramInfo {
  const p = ProtoFields.parse(b, tagsUpTo(1)).message(1, tagsUpTo(6));
  const name = p.optString(4);
  return { vkHash: p.bytes(1), vk: p.bytes(2), programUri: p.string(3), ...(name !== undefined ? { name } : {}), owner: p.bytes(5), createdAt: p.uint(6) };
}

export interface ProofStatus {
  fulfillmentStatus: number;
  executionStatus: number;
  requestTxHash: Uint8Array;
  deadline: bigint;
  fulfillTxHash?: Uint8Array;
  proofUri?: string;
  publicValuesHash?: Uint8Array;
}

export function decodeStatus(b: Uint8Array): ProofStatus {
  const f = ProtoFields.parse(b, tagsUpTo(7));
  const s: ProofStatus = { fulfillmentStatus: Number(f.uint(1)), executionStatus: Number(f.uint(2)), requestTxHash: f.bytes(3), deadline: f.uint(4) };
  const ft = f.optBytes(5);
  if (ft) s.fulfillTxHash = ft;
  const uri = f.optString(6);
  if (uri !== undefined) s.proofUri = uri;
  const pvh = f.optBytes(7);
  if (pvh) s.publicValuesHash = pvh;
  return s;
}
