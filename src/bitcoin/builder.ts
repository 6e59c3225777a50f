/**
 * The unsigned spell transaction, built exactly as the reference's `make_transactions` /
 * `add_spell` (src/tx/bitcoin_tx.rs) with rust-bitcoin 0.32 arithmetic:
 *
 * - version 2, locktime 0; inputs = the spell's inputs in order (empty scriptSig, sequence
 *   0xffffffff); no extra funding input: fees come out of the spell inputs;
 * - outputs: one per coin, then the Charms fee output (if due), the `OP_RETURN "spell"` output,
 *   and change to the change address when at least 300 sats;
 * - Charms fee output: coins already paying the fee script count towards the fee; if they fall
 *   short, an output of `fee − existing + 300` is added (the +300 is the reference's);
 * - fee = ceil(sat/kwu × weight / 1000) with sat/kwu = trunc(sat/vB × 250) and weight = weight of
 *   the tx before change + 65 wu per input (signatures) + 172 wu (a P2TR change output, counted
 *   even when no change is added).
 */
import { CharmsError } from '../errors.js';
import { equalBytes } from '../util/bytes.js';
import { decodeAddress } from './address.js';
import { opReturnSpellScript } from './spell-location.js';
import { serializeTx, txWeight, type BitcoinTx, type TxOut } from './tx.js';

export const DUST_LIMIT = 300n;
/** Bitcoin Core's MAX_STANDARD_TX_WEIGHT: nodes do not relay a heavier transaction. */
export const MAX_STANDARD_TX_WEIGHT = 400_000;
/** Bitcoin Core's default `maxfeerate` (0.10 BTC/kvB) in sat/vB: a higher rate is a mistake, not a fee. */
const DEFAULT_MAX_FEE_RATE = 10_000;

/** OP_0 or OP_1..OP_16 followed by one push of 2..40 bytes. */
const isWitnessProgram = (s: Uint8Array): boolean =>
  s.length >= 4 && s.length <= 42 && (s[0] === 0 || (s[0]! >= 0x51 && s[0]! <= 0x60)) && s[1] === s.length - 2;

/**
 * Bitcoin Core's `GetDustThreshold` at the default dust relay fee (3 sat/vB): the cost of the
 * output and of the input that will spend it (546 P2PKH, 540 P2SH, 294 P2WPKH, 330 P2WSH/P2TR);
 * 0 for an unspendable OP_RETURN. An output below it is not relayed.
 */
export function dustThreshold(script: Uint8Array): bigint {
  if (script[0] === 0x6a) return 0n;
  const outSize = 8 + (script.length < 0xfd ? 1 : 3) + script.length;
  const spendSize = isWitnessProgram(script) ? 32 + 4 + 1 + 26 + 4 : 32 + 4 + 1 + 107 + 4;
  return BigInt(outSize + spendSize) * 3n;
}

/**
 * Refuses a fee rate no one means (stricter than the reference, which builds with any f64): not a
 * number, negative (the reference saturates it to a zero fee), or above `max` sat/vB (Bitcoin
 * Core's `maxfeerate` guard; `SVC_MAX_FEE_RATE`, default 10 000).
 */
export function checkFeeRate(feeRate: number, max = DEFAULT_MAX_FEE_RATE): void {
  if (!Number.isFinite(feeRate) || feeRate < 0) throw new CharmsError('INVALID_INPUT', `fee_rate must be a non-negative number of sat/vB, got ${feeRate}`);
  if (feeRate > max)
    throw new CharmsError(
      'INVALID_INPUT',
      `fee_rate ${feeRate} sat/vB is above this prover's cap of ${max} sat/vB (like Bitcoin Core's maxfeerate): a fee that high is a mistake`,
    );
}

/** Refuses coin outputs below the dust threshold of their script (the reference builds them; nodes do not relay them). */
export function checkNotDust(coins: readonly { amount: bigint; dest: Uint8Array }[], skip: ReadonlySet<number> = new Set()): void {
  coins.forEach((c, i) => {
    if (skip.has(i)) return;
    const min = dustThreshold(c.dest);
    if (c.amount < min)
      throw new CharmsError(
        'INVALID_INPUT',
        `output #${i} of ${c.amount} sats is dust (below ${min} sats for its script): Bitcoin nodes do not relay the transaction`,
      );
  });
}

/** Refuses a transaction whose weight (signatures counted) passes the standard limit. */
export function checkStandardWeight(weight: bigint | number, what: string): void {
  if (BigInt(weight) > BigInt(MAX_STANDARD_TX_WEIGHT))
    throw new CharmsError(
      'INVALID_INPUT',
      `${what} weighs ${weight} wu with signatures, over the standard limit of ${MAX_STANDARD_TX_WEIGHT}: Bitcoin nodes do not relay it; split the spell`,
    );
}
const CHANGE_OUTPUT_WEIGHT = 172n;
const SIGNATURE_WEIGHT_PER_INPUT = 65n;
const U64_MAX = (1n << 64n) - 1n;

export interface BuildArgs {
  /** The spell's inputs (txid in internal byte order). */
  ins: { txid: Uint8Array; vout: number }[];
  /** The value of each input, same order as `ins`. */
  prevOutValues: bigint[];
  /** The spell's coin outputs. */
  coins: { amount: bigint; dest: Uint8Array }[];
  /** CBOR of `(spell, proof)`. */
  spellPayload: Uint8Array;
  changeAddress: string;
  /** sat/vB. */
  feeRate: number;
  /** The fee-rate cap in sat/vB (default DEFAULT_MAX_FEE_RATE). */
  maxFeeRate?: number;
  /** The Charms fee and its script, when fee settings name a script for the change network. */
  charmsFee?: { script: Uint8Array; amount: bigint };
}

/** sat/kwu from sat/vB: Rust's `(fee_rate * 250.0) as u64` (truncating, saturating, NaN → 0). */
export function satPerKwu(feeRate: number): bigint {
  const x = feeRate * 250;
  if (!(x > 0)) return 0n;
  return x >= 2 ** 64 ? U64_MAX : BigInt(Math.trunc(x));
}

/** rust-bitcoin 0.32 `FeeRate::fee_wu`: ceil(rate × weight / 1000); the reference unwraps overflow. */
export function feeForWeight(satPerKwu: bigint, weight: bigint): bigint {
  const product = satPerKwu * weight;
  if (product + 999n > U64_MAX) throw new CharmsError('INVALID_INPUT', `fee_rate: the fee for ${weight} wu at ${satPerKwu} sat/kwu overflows u64`);
  return (product + 999n) / 1000n;
}

const sum = (xs: bigint[]): bigint => xs.reduce((s, v) => s + v, 0n);

export interface BuiltSpellTx {
  /** The unsigned transaction, consensus serialization (legacy form whenever it has inputs). */
  bytes: Uint8Array;
  tx: BitcoinTx;
  fee: bigint;
  /** The change amount (added as an output only when ≥ DUST_LIMIT). */
  change: bigint;
  weightForFee: bigint;
}

/** Builds the unsigned spell transaction and reports the fee figures. */
export function buildSpellTxDetailed(a: BuildArgs): BuiltSpellTx {
  if (a.prevOutValues.length !== a.ins.length)
    throw new CharmsError('INTERNAL', `buildSpellTx: ${a.prevOutValues.length} input values for ${a.ins.length} inputs`);
  let changeScript: Uint8Array;
  try {
    changeScript = decodeAddress(a.changeAddress).script;
  } catch (e) {
    throw new CharmsError('INVALID_INPUT', `Invalid change address: ${a.changeAddress}`, { cause: e });
  }
  // An empty scriptPubKey is spendable by anyone: never build one (e.g. an unbound Scrolls output).
  const empty = a.coins.findIndex((c) => c.dest.length === 0);
  if (empty >= 0) throw new CharmsError('INVALID_INPUT', `output #${empty} has an empty script (anyone could spend it): refusing to build the transaction`);
  checkFeeRate(a.feeRate, a.maxFeeRate);
  checkNotDust(a.coins);
  const outputs: TxOut[] = a.coins.map((c) => ({ value: c.amount, script: c.dest }));
  if (a.charmsFee) {
    const { script, amount } = a.charmsFee;
    const existing = sum(outputs.filter((o) => equalBytes(o.script, script)).map((o) => o.value));
    if (existing < amount) outputs.push({ value: amount - existing + DUST_LIMIT, script });
  }
  outputs.push({ value: 0n, script: opReturnSpellScript(a.spellPayload) });
  const tx: BitcoinTx = {
    version: 2,
    locktime: 0,
    inputs: a.ins.map((i) => ({ txid: i.txid, vout: i.vout, scriptSig: new Uint8Array(0), sequence: 0xffffffff, witness: [] })),
    outputs,
  };
  const weightForFee = BigInt(txWeight(tx)) + SIGNATURE_WEIGHT_PER_INPUT * BigInt(tx.inputs.length) + CHANGE_OUTPUT_WEIGHT;
  checkStandardWeight(weightForFee, 'the transaction');
  const fee = feeForWeight(satPerKwu(a.feeRate), weightForFee);
  const amountIn = sum(a.prevOutValues);
  const amountOut = sum(outputs.map((o) => o.value));
  const change = amountIn - amountOut - fee;
  if (change < 0n)
    // The reference panics here (Amount underflow); we report the shortfall instead.
    throw new CharmsError(
      'INSUFFICIENT_FUNDS',
      `spell inputs must have sufficient value to cover outputs and fees: inputs ${amountIn} sats, outputs ${amountOut} sats, fee ${fee} sats; ${-change} sats short`,
    );
  // the reference's 300-sat floor, raised to the change script's dust threshold (e.g. 546 for P2PKH)
  if (change >= DUST_LIMIT && change >= dustThreshold(changeScript)) outputs.push({ value: change, script: changeScript });
  if (outputs.some((o) => o.script.length === 0)) throw new CharmsError('INTERNAL', 'built an output with an empty script: refusing it');
  return { bytes: serializeTx(tx), tx, fee, change, weightForFee };
}

/** The unsigned spell transaction, serialized as the prover returns it. */
export const buildSpellTx = (a: BuildArgs): Uint8Array => buildSpellTxDetailed(a).bytes;
