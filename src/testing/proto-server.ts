/**
 * The server's half of the SP1 Prover Network messages (src/prover/network/proto.ts has the
 * client's): what the fake network (fake-prover-network.ts) decodes from requests and encodes in
 * answers, and what the golden tests compare with `protoc --encode`. Test code only.
 */
import {
  ProtoFields,
  ProtoWriter,
  type NetworkVariant,
  type ProgramInfo,
  type ProofModeValue,
  type ProofRequestParams,
  type ProofStatus,
  type RequestProofBody,
} from '../prover/network/proto.js';

export function decodeRequestProofBody(bytes: Uint8Array, variant: NetworkVariant): RequestProofBody {
  const f = ProtoFields.parse(bytes);
  const body: RequestProofBody = {
    nonce: f.uint(1),
    vkHash: f.bytes(2),
    version: f.string(3),
    mode: Number(f.uint(4)) as ProofModeValue,
    strategy: Number(f.uint(5)),
    stdinUri: f.string(6),
    deadline: f.uint(7),
    cycleLimit: f.uint(8),
    gasLimit: f.uint(9),
    minAuctionPeriod: f.uint(10),
    whitelist: f.repeatedBytes(11),
    stdinPrivate: variant === 'auction' ? f.bool(21) : f.bool(12),
  };
  if (variant === 'auction') {
    const pvh = f.optBytes(16);
    body.auction = {
      domain: f.bytes(12),
      auctioneer: f.bytes(13),
      executor: f.bytes(14),
      verifier: f.bytes(15),
      ...(pvh ? { publicValuesHash: pvh } : {}),
      baseFee: f.string(17),
      maxPricePerPgu: f.string(18),
      variant: Number(f.uint(19)),
      treasury: f.bytes(20),
    };
  }
  return body;
}

export function encodeParams(p: ProofRequestParams): Uint8Array {
  return new ProtoWriter()
    .bytes(1, p.domain)
    .bytes(2, p.auctioneer)
    .bytes(3, p.executor)
    .bytes(4, p.verifier)
    .bytes(5, p.maxPricePerPgu)
    .bytes(6, p.baseFee)
    .bytes(7, p.treasury)
    .uint(8, p.tickSize)
    .finish();
}

export function encodeProgramResponse(p: ProgramInfo): Uint8Array {
  const inner = new ProtoWriter().bytes(1, p.vkHash).bytes(2, p.vk).bytes(3, p.programUri).present(4, p.name).bytes(5, p.owner).uint(6, p.createdAt).finish();
  return new ProtoWriter().present(1, inner).finish();
}

export function encodeStatus(s: ProofStatus): Uint8Array {
  return new ProtoWriter()
    .uint(1, s.fulfillmentStatus)
    .uint(2, s.executionStatus)
    .bytes(3, s.requestTxHash)
    .uint(4, s.deadline)
    .present(5, s.fulfillTxHash)
    .present(6, s.proofUri)
    .present(7, s.publicValuesHash)
    .finish();
}
