/**
 * The unsigned spell transaction, built exactly as the reference does: inputs = the spell's
 * inputs; outputs = coins, then the protocol fee output (if due), the `OP_RETURN "spell"` output,
 * and change when at least 300 sats. Fee maths as rust-bitcoin 0.32: sat/kwu truncated from
 * sat/vB × 250, fee rounded up.
 */
import { CharmsError } from '../errors.js';
import { equalBytes } from '../util/bytes.js';
import { addressToScript } from './address.js';
import { opReturnSpellScript } from './spell-location.js';
import { serializeTx, type BitcoinTx, type TxOut } from './tx.js';

export const DUST_LIMIT = 300n;
const CHANGE_OUTPUT_WEIGHT = 172n;
const SIGNATURE_WEIGHT_PER_INPUT = 65n;

export interface BuildArgs {
  ins: { txid: Uint8Array; vout: number }[];
  prevOutValues: bigint[];
  coins: { amount: bigint; dest: Uint8Array }[];
  spellPayload: Uint8Array;
  changeAddress: string;
  feeRate: number;
  charmsFee?: { script: Uint8Array; amount: bigint };
}

/** sat/kwu from sat/vB: `(fee_rate * 250.0) as u64` (saturating, NaN → 0). */
export function satPerKwu(feeRate: number): bigint {
  const x = feeRate * 250;
  if (!(x > 0)) return 0n;
  return x >= 2 ** 64 ? (1n << 64n) - 1n : BigInt(Math.floor(x));
}

export function buildSpellTx(a: BuildArgs): Uint8Array {
  let change;
  try {
    change = addressToScript(a.changeAddress);
  } catch (e) {
    throw new CharmsError('INVALID_INPUT', `Invalid change address: ${a.changeAddress}`, { cause: e });
  }
  const outputs: TxOut[] = a.coins.map((c) => ({ value: c.amount, script: c.dest }));
  if (a.charmsFee) {
    const existing = outputs.filter((o) => equalBytes(o.script, a.charmsFee!.script)).reduce((s, o) => s + o.value, 0n);
    if (existing < a.charmsFee.amount)
      outputs.push({ value: a.charmsFee.amount - existing + DUST_LIMIT, script: a.charmsFee.script });
  }
  outputs.push({ value: 0n, script: opReturnSpellScript(a.spellPayload) });
  const tx: BitcoinTx = {
    version: 2,
    locktime: 0,
    inputs: a.ins.map((i) => ({ txid: i.txid, vout: i.vout, scriptSig: new Uint8Array(0), sequence: 0xffffffff, witness: [] })),
    outputs,
  };
  const weight = 4n * BigInt(serializeTx(tx, { witness: false }).length) + SIGNATURE_WEIGHT_PER_INPUT * BigInt(tx.inputs.length) + CHANGE_OUTPUT_WEIGHT;
  const fee = (satPerKwu(a.feeRate) * weight + 999n) / 1000n;
  const amountIn = a.prevOutValues.reduce((s, v) => s + v, 0n);
  const amountOut = outputs.reduce((s, o) => s + o.value, 0n);
  const changeAmount = amountIn - amountOut - fee;
  if (changeAmount < 0n)
    throw new CharmsError(
      'INSUFFICIENT_FUNDS',
      `spell inputs must have sufficient value to cover outputs and fees: inputs ${amountIn} sats, outputs ${amountOut} sats, fee ${fee} sats; ${-changeAmount} sats short`,
    );
  if (changeAmount >= DUST_LIMIT) outputs.push({ value: changeAmount, script: change.script });
  return serializeTx(tx, { witness: false });
}
