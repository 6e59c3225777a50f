/**
 * One proof on the network, as `NetworkProver::prove` of SP1 SDK 6.3.0 does it with Charms'
 * settings (skip_simulation, 16e9 gas and cycle limits, 7 s minimum auction, 19 s auction timeout,
 * auction strategy): check the program is registered, fetch the auction parameters and the
 * prover whitelist, upload the stdin, sign and send the request, poll every 2 s, download the proof.
 * A stuck auction is cancelled; an auction timeout, an unfulfillable request or a timeout is retried
 * once with the high-availability whitelist. The base variant (reserved capacity, self-hosted
 * sp1-cluster gateways) has no auction: no parameters, no whitelist, no cancel.
 */
import { CharmsError } from '../../errors.js';
import { toHex } from '../../util/bytes.js';
import { GrpcError } from './grpc.js';
import { networkStageDuration, outcomeOf } from '../../util/metrics.js';
import type { NetworkClient } from './client.js';
import {
  ExecutionStatus,
  FulfillmentStatus,
  FulfillmentStrategy,
  ProofMode,
  type NetworkVariant,
  type ProofModeValue,
  type RequestProofBody,
} from './proto.js';

/** `"sp1-" + SP1_CIRCUIT_VERSION` of SDK 6.3.0: the circuit version, not the crate version. */
export const SP1_CIRCUIT_VERSION = 'sp1-v6.1.0';

export interface RequestSettings {
  variant: NetworkVariant;
  cycleLimit: bigint;
  gasLimit: bigint;
  minAuctionPeriodSec: bigint;
  auctionTimeoutMs: number;
  /** Seconds from now to the request's deadline. */
  timeoutSec: number;
  pollIntervalMs: number;
  /**
   * Largest proof download per mode, before the stdin's length is added (a proof repeats its
   * public values, which come from the stdin). Real ones: ~1.2 MB compressed, a few KB Groth16.
   */
  maxProofBytes: { compressed: number; groth16: number };
}

/** Room for the proof itself, several times the real sizes. */
const DEFAULT_MAX_PROOF_BYTES = { compressed: 8 * 1024 * 1024, groth16: 256 * 1024 } as const;

/** Charms' settings (src/utils/prover.rs); the timeout is the SDK's default for 16e9 gas (min(max(300, gas/2e6), 14400)). */
export function charmsSettings(variant: NetworkVariant): RequestSettings {
  const gasLimit = 16_000_000_000n;
  return {
    variant,
    cycleLimit: 16_000_000_000n,
    gasLimit,
    minAuctionPeriodSec: variant === 'auction' ? 7n : 0n,
    auctionTimeoutMs: 19_000,
    timeoutSec: Math.min(Math.max(300, Number(gasLimit / 2_000_000n)), 14_400),
    pollIntervalMs: 2000,
    maxProofBytes: { ...DEFAULT_MAX_PROOF_BYTES },
  };
}

export interface ProgressEvent {
  stage: string;
  status: string;
  requestId?: string;
}

export interface ProveContext {
  client: NetworkClient;
  settings: RequestSettings;
  /** Names the step in progress events and errors, e.g. "stage 1 (spell checker)". */
  stage: string;
  progress?: (e: ProgressEvent) => void;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/** Why one request attempt ended without a proof. */
export class RequestFailure extends Error {
  override name = 'RequestFailure';
  constructor(
    readonly kind: 'unexecutable' | 'unfulfillable' | 'auction_timeout' | 'timeout',
    message: string,
    readonly requestId: string,
  ) {
    super(message);
  }
}

const STATUS_NAMES: Record<number, string> = Object.fromEntries(Object.entries(FulfillmentStatus).map(([k, v]) => [v, k.toLowerCase()]));

/** `floor(v × 120 / 100)` rounded down to a multiple of `tick` (the SDK's price headroom). */
function maxPriceWithHeadroom(maxPricePerPgu: string, tickSize: bigint): string {
  if (!/^\d{1,78}$/.test(maxPricePerPgu))
    throw new CharmsError('UPSTREAM_FAILED', `the prover network sent a malformed max price: ${JSON.stringify(maxPricePerPgu.slice(0, 40))}`);
  const v = (BigInt(maxPricePerPgu) * 120n) / 100n;
  return (tickSize > 0n ? (v / tickSize) * tickSize : v).toString();
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Proves `stdin` (bincode SP1Stdin) with the program `vkHash` in `mode`; returns the downloaded
 * `ProofFromNetwork` bincode. Throws RequestFailure for the request's own outcomes (the caller maps
 * them per stage) and GrpcError when the network stays unreachable after the SDK's retries.
 */
export function proveOnNetwork(ctx: ProveContext, vkHash: Uint8Array, stdin: Uint8Array, mode: ProofModeValue): Promise<Uint8Array> {
  const stage = mode === ProofMode.GROTH16 ? 'groth16' : mode === ProofMode.COMPRESSED ? 'compressed' : 'other';
  const t0 = performance.now();
  const done = (outcome: string) => networkStageDuration.observe({ stage, outcome }, (performance.now() - t0) / 1000);
  return proveStage(ctx, vkHash, stdin, mode).then(
    (v) => {
      done('ok');
      return v;
    },
    (e: unknown) => {
      done(e instanceof RequestFailure ? e.kind : outcomeOf(e));
      throw e;
    },
  );
}

async function proveStage(ctx: ProveContext, vkHash: Uint8Array, stdin: Uint8Array, mode: ProofModeValue): Promise<Uint8Array> {
  const { client, settings } = ctx;
  const now = ctx.now ?? Date.now;
  const sleep = ctx.sleep ?? defaultSleep;
  const emit = (status: string, requestId?: string) => ctx.progress?.({ stage: ctx.stage, status, ...(requestId ? { requestId } : {}) });

  const program = await client.getProgram(vkHash);
  if (!program)
    throw new CharmsError(
      'PROVER_UNAVAILABLE',
      `the program 0x${toHex(vkHash)} (${ctx.stage}) is not registered on the prover network at ${client.channel.origin}; register it with the SP1 SDK (it needs the program's ELF) or use a network where it is`,
    );

  const auction = settings.variant === 'auction';
  const params = auction ? await client.getProofRequestParams(mode) : undefined;
  const maxPrice = params ? maxPriceWithHeadroom(params.maxPricePerPgu, params.tickSize) : '';
  emit('uploading stdin');
  const stdinUri = await client.uploadStdin(stdin);

  const attempt = async (whitelist: Uint8Array[]): Promise<Uint8Array> => {
    const body: Omit<RequestProofBody, 'nonce'> = {
      vkHash,
      version: SP1_CIRCUIT_VERSION,
      mode,
      strategy: auction ? FulfillmentStrategy.AUCTION : FulfillmentStrategy.RESERVED,
      stdinUri,
      deadline: BigInt(Math.floor(now() / 1000) + settings.timeoutSec),
      cycleLimit: settings.cycleLimit,
      gasLimit: settings.gasLimit,
      minAuctionPeriod: settings.minAuctionPeriodSec,
      whitelist,
      stdinPrivate: false,
      ...(params
        ? {
            auction: {
              domain: params.domain,
              auctioneer: params.auctioneer,
              executor: params.executor,
              verifier: params.verifier,
              baseFee: params.baseFee,
              maxPricePerPgu: maxPrice,
              variant: 0,
              treasury: params.treasury,
            },
          }
        : {}),
    };
    const idBytes = await client.requestProof(body);
    const id = `0x${toHex(idBytes)}`;
    emit('requested', id);
    const started = now();
    const deadlineMs = Number(body.deadline) * 1000;
    let last = -1;
    for (;;) {
      await sleep(settings.pollIntervalMs);
      const st = await client.getProofRequestStatus(idBytes);
      if (st.fulfillmentStatus !== last) {
        last = st.fulfillmentStatus;
        emit(STATUS_NAMES[last] ?? `status ${last}`, id);
      }
      if (st.executionStatus === ExecutionStatus.UNEXECUTABLE) throw new RequestFailure('unexecutable', `the network could not execute ${ctx.stage}`, id);
      if (st.fulfillmentStatus === FulfillmentStatus.FULFILLED) {
        if (!st.proofUri) throw new GrpcError(13, 'request fulfilled without a proof URI', 'GetProofRequestStatus');
        emit('downloading proof', id);
        const cap =
          (mode === ProofMode.COMPRESSED || mode === ProofMode.CORE ? settings.maxProofBytes.compressed : settings.maxProofBytes.groth16) + stdin.length;
        return client.download(st.proofUri, cap);
      }
      if (
        st.fulfillmentStatus === FulfillmentStatus.UNFULFILLABLE ||
        st.fulfillmentStatus === FulfillmentStatus.REVERTED ||
        st.fulfillmentStatus === FulfillmentStatus.EXPIRED
      )
        throw new RequestFailure('unfulfillable', `the network marked ${ctx.stage} ${STATUS_NAMES[st.fulfillmentStatus]}`, id);
      const t = now();
      if (t > deadlineMs || (st.deadline > 0n && t > Number(st.deadline) * 1000)) throw new RequestFailure('timeout', `${ctx.stage} passed its deadline`, id);
      if (auction && st.fulfillmentStatus === FulfillmentStatus.REQUESTED && t - started > settings.auctionTimeoutMs) {
        emit('auction timed out: cancelling', id);
        await client.cancelRequest(idBytes);
        throw new RequestFailure('auction_timeout', `no prover took ${ctx.stage} within ${settings.auctionTimeoutMs / 1000} s`, id);
      }
    }
  };

  if (!auction) return attempt([]);
  try {
    return await attempt(await client.getProversByUptime(false));
  } catch (e) {
    if (!(e instanceof RequestFailure) || e.kind === 'unexecutable') throw e;
    emit(`${e.message}; retrying once with high-availability provers`);
    return attempt(await client.getProversByUptime(true));
  }
}
