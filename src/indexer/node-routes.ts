/**
 * Routes the official wallet (CharmsDev/charms-wallet) calls that the hosted explorer does not
 * serve (its beaming code falls back to mempool.space), answered from the followed node:
 *
 *   GET /v1/wallet/tx/{txid}/with-proof   {hex_with_proof: BitcoinTx::WithBlockProof}
 *   GET /v1/tx/{txid}/outspend/{vout}     Esplora's outspend shape
 *
 * `hex_with_proof` is what the wallet's `fetchBtcTxWithProof` builds from mempool.space
 * (`services/beam/chains/bitcoin/proof.js`): the transaction, its block's merkle proof (Bitcoin
 * Core's `gettxoutproof` format) and the headers of the 6 blocks after that block, as hex; under
 * both the wallet's names (`txHex`, `proofHex`, `headers`) and the reference's serde names of
 * `BitcoinTx::WithBlockProof` (`tx`, `proof`, `headers`), so that the object is passed to the
 * prover as it is. Never kept by the answer cache (a reorg moves the block, the node answers).
 *
 * An outspend of a charm output is the index's (its spender, or the pending one of the mempool
 * overlay); of any other output the BTC source's: Esplora names the spender, Bitcoin Core's
 * `gettxout` only tells unspent from spent (then `spender_unknown: true`). `source` says which.
 */
import { merkleBlockTxids } from '../bitcoin/finality.js';
import { CharmsError } from '../errors.js';
import type { Req, Res } from '../infra/http.js';
import type { BlockSource, Outspend } from '../sources/block-source.js';
import type { BtcSource } from '../sources/btc-source.js';
import { equalBytes, reversed, toHex } from '../util/bytes.js';
import { sha256 } from '../util/sha256.js';
import { ok, type J } from './api.js';
import type { MempoolOverlay } from './mempool.js';
import type { Route } from './routes.js';
import type { IndexReader } from './store.js';

export interface NodeContext {
  store: IndexReader;
  mempool?: MempoolOverlay | undefined;
  /** The node the index follows (or reads, with --api-only). */
  source?: BlockSource | undefined;
  /** The plain-BTC source (`--esplora-url`, `--rpc-url`). */
  btc?: BtcSource | undefined;
}

/** Blocks after the transaction's block whose headers the proof carries (the wallet fetches 6). */
const FINALITY_HEADERS = 6;
/** The schema's INTEGER columns hold at most this. */
const MAX_INT32 = 2 ** 31 - 1;

const bad = (msg: string): CharmsError => new CharmsError('INVALID_INPUT', msg);
const dsha = (b: Uint8Array): Uint8Array => sha256(sha256(b));
const blockHashOf = (header: Uint8Array): string => toHex(reversed(dsha(header)));

function txidArg(raw: string): string {
  if (!/^[0-9a-fA-F]{64}$/.test(raw)) throw bad('txid: expected 64 hex characters');
  return raw.toLowerCase();
}

/** The block of `txid` the index knows (a charm transaction, or one of its recent blocks). */
async function knownBlockHash(store: IndexReader, txid: string): Promise<string | undefined> {
  return store.read(async () => {
    const height = (await store.recentTxHeight(txid)) ?? (await store.spellTx(txid))?.height ?? (await store.spentBy(txid))[0]?.spent?.height;
    return height === undefined ? undefined : (await store.blockAt(height))?.hash;
  });
}

type ProofSource = BlockSource & Required<Pick<BlockSource, 'txOutProof' | 'rawHeader'>>;

/** The source of proofs: the followed node, else a BTC source that is a block source too. */
function proofSource(c: NodeContext): ProofSource | undefined {
  for (const s of [c.source, c.btc as unknown as BlockSource | undefined])
    if (s && typeof s.txOutProof === 'function' && typeof s.rawHeader === 'function' && typeof s.hashAt === 'function') return s as ProofSource;
  return undefined;
}

/** GET /v1/wallet/tx/{txid}/with-proof: the transaction with its finality proof. */
async function withProof(c: NodeContext, _req: Req, m: RegExpExecArray): Promise<Res> {
  const txid = txidArg(m[1]!);
  const src = proofSource(c);
  if (!src) throw new CharmsError('UPSTREAM_UNAVAILABLE', 'with-proof: no node configured (start charms index with --rpc-url or --esplora-url)');
  const known = await knownBlockHash(c.store, txid);
  const proof = await src.txOutProof(txid, known);
  if (!proof) throw new CharmsError('NOT_FOUND', `transaction ${txid} is not in a block ${src.name} knows`);
  let proves: boolean;
  try {
    proves = merkleBlockTxids(proof).some((id) => equalBytes(id, reversed(Buffer.from(txid, 'hex'))));
  } catch (e) {
    throw new CharmsError('UPSTREAM_FAILED', `${src.name} answered a merkle proof that does not check`, { cause: e });
  }
  if (!proves) throw new CharmsError('UPSTREAM_FAILED', `${src.name} answered a merkle proof without transaction ${txid}`);
  const blockHash = blockHashOf(proof.subarray(0, 80));
  const info = await src.header(blockHash);
  if (!info?.inBestChain)
    throw new CharmsError('UPSTREAM_UNAVAILABLE', `block ${blockHash} of transaction ${txid} is not in ${src.name}'s best chain (a reorg?): retry`);
  const headers: string[] = [];
  let prev = proof.subarray(0, 80);
  for (let i = 1; i <= FINALITY_HEADERS; i++) {
    const hash = await src.hashAt(info.height + i);
    if (hash === undefined)
      throw new CharmsError(
        'NOT_FOUND',
        `transaction ${txid} has ${i} confirmations; its proof needs the ${FINALITY_HEADERS} blocks after block ${info.height}: ask again after block ${info.height + FINALITY_HEADERS}`,
      );
    const raw = await src.rawHeader(hash);
    // each header must be the one asked for and follow the previous one (else a reorg came between)
    if (raw?.length !== 80 || blockHashOf(raw) !== hash || !equalBytes(raw.subarray(4, 36), dsha(prev)))
      throw new CharmsError('UPSTREAM_UNAVAILABLE', `${src.name}'s blocks after ${info.height} moved while they were read (a reorg?): retry`);
    headers.push(toHex(raw));
    prev = raw;
  }
  const tx = await src.rawTx(txid, blockHash);
  if (!tx) throw new CharmsError('NOT_FOUND', `transaction ${txid} is unknown to ${src.name}`);
  const txHex = toHex(tx);
  const proofHex = toHex(proof);
  return ok({
    txid,
    block_hash: blockHash,
    block_height: info.height,
    hex_with_proof: { tx: txHex, proof: proofHex, headers, txHex, proofHex },
  });
}

/** An Esplora outspend answer. */
function outspendJson(o: Outspend, source: string): J {
  if (!o.spent) return { spent: false, source };
  if (o.txid === undefined) return { spent: true, spender_unknown: true, source };
  return {
    spent: true,
    txid: o.txid,
    vin: o.vin,
    status: o.confirmed ? { confirmed: true, block_height: o.height, block_hash: o.blockHash } : { confirmed: false },
    source,
  };
}

/** The BTC source for outspends: Esplora first (it names spenders), else the node's `gettxout`. */
function outspendSource(c: NodeContext): { name: string; kind: string; outspend: NonNullable<BtcSource['outspend']> } | undefined {
  const all = [c.btc, c.source as unknown as BtcSource | undefined].filter((s): s is BtcSource => typeof s?.outspend === 'function');
  const s = all.find((x) => x.kind === 'esplora') ?? all[0];
  return s && { name: s.name, kind: s.kind === 'esplora' ? 'esplora' : 'bitcoind', outspend: s.outspend!.bind(s) };
}

/** GET /v1/tx/{txid}/outspend/{vout}. */
async function outspend(c: NodeContext, _req: Req, m: RegExpExecArray): Promise<Res> {
  const txid = txidArg(m[1]!);
  const vout = Number(m[2]);
  if (vout > 0xffffffff) throw bad('vout: expected an output index (at most 4294967295)');
  if (vout <= MAX_INT32) {
    const answer = await c.store.read(async (): Promise<J | undefined> => {
      const row = (await c.store.output(txid, vout))[0];
      if (!row) return undefined;
      if (row.spent) {
        const block = await c.store.blockAt(row.spent.height);
        return outspendJson(
          { spent: true, txid: row.spent.txid, vin: row.spent.vin, confirmed: true, height: row.spent.height, blockHash: block?.hash },
          'index',
        );
      }
      const pending = c.mempool?.spender(txid, vout);
      if (pending === undefined) return outspendJson({ spent: false }, 'index');
      const vin = c.mempool?.get(pending)?.spends.indexOf(`${txid}:${vout}`) ?? -1;
      return outspendJson({ spent: true, txid: pending, vin: vin >= 0 ? vin : undefined, confirmed: false }, 'index');
    });
    if (answer !== undefined) return ok(answer);
  }
  const src = outspendSource(c);
  if (!src) throw new CharmsError('UPSTREAM_UNAVAILABLE', `output ${txid}:${vout} holds no charm; outspends of others need --esplora-url or --rpc-url`);
  const o = await src.outspend(txid, vout);
  if (!o) throw new CharmsError('NOT_FOUND', `output ${txid}:${vout} is unknown to ${src.name}`);
  return ok(outspendJson(o, src.kind));
}

/** The routes of this module (never kept: the node's answers move with it). */
export const NODE_ROUTES: readonly Route<NodeContext>[] = [
  {
    method: 'GET',
    pattern: /^\/v1\/wallet\/tx\/([^/]+)\/with-proof$/,
    doc: '/v1/wallet/tx/{txid}/with-proof',
    cache: 'none',
    network: 'not-found',
    handler: withProof,
  },
  {
    method: 'GET',
    pattern: /^\/v1\/tx\/([^/]+)\/outspend\/(\d{1,10})$/,
    doc: '/v1/tx/{txid}/outspend/{vout}',
    cache: 'none',
    network: 'not-found',
    handler: outspend,
  },
];
