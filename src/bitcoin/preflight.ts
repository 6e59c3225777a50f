/**
 * The Bitcoin part of the prover server's request preflight (`validate_prove_request` in
 * src/spell/validate.rs), run after the spell checks and before proving:
 *
 * 1. the change address must parse and be valid for main or testnet4 (regtest only on a mock
 *    prover): `Unsupported network of change address: Address<NetworkUnchecked>(…)`;
 * 2. every coin `dest` must be a script an address can pay to (Scrolls outputs with an empty dest
 *    excepted): `all output addresses must be valid for the network`;
 * 3. Σ inputs > Σ coins + Charms fee + estimated Bitcoin fee, where the estimate is
 *    `(111 + ⌊(spellCborLen + 372) / 4⌋ + vsize(unsigned ins+coins tx) + 28 × inputs) × trunc(fee_rate)`
 *    and `spellCborLen` is the length of CBOR(spell without `ins`, 128 × 0xff dummy proof).
 *
 * The estimate counts the spell at the witness discount although it now sits in an OP_RETURN,
 * so a request can pass here and still fall short in the builder (see builder.ts).
 */
import { CharmsError } from '../errors.js';
import { reversed, toHex } from '../util/bytes.js';
import { BITCOIN_NETWORKS, type BitcoinNetwork } from '../model/network.js';
import { decodeAddress, isStandardScriptFor, isTagValidFor } from './address.js';
import { txVsize, txWeight, type BitcoinTx } from './tx.js';
import { checkFeeRate, checkNotDust, checkStandardWeight } from './builder.js';

const U64_MAX = (1n << 64n) - 1n;

export interface PreflightArgs {
  changeAddress: string;
  /** Whether the prover is a mock prover (regtest change addresses are accepted only then). */
  mock: boolean;
  /** The spell's inputs (txid in internal byte order). */
  ins: { txid: Uint8Array; vout: number }[];
  /** The value of each input from `prev_txs`, same order; `undefined` when not found there. */
  prevOutValues: (bigint | undefined)[];
  coins: { amount: bigint; dest: Uint8Array }[];
  /** Indexes of Scrolls outputs (`spell.tx.scrolls`): their dest may still be empty. */
  scrolls?: readonly number[];
  /** The Charms fee in sats (0 without fee settings). */
  charmsFee: bigint;
  /** sat/vB as requested. */
  feeRate: number;
  /** The fee-rate cap in sat/vB (default builder.ts DEFAULT_MAX_FEE_RATE). */
  maxFeeRate?: number;
  /** Length of CBOR(spell with `ins` removed, dummy proof of 128 × 0xff as an array of uints). */
  spellCborLenForEstimate: number;
}

export interface PreflightResult {
  network: BitcoinNetwork;
  totalSatsIn: bigint;
  totalSatsOut: bigint;
  charmsFee: bigint;
  estimatedBitcoinFee: bigint;
  /** vsize of the unsigned transaction of inputs and coins only. */
  txVsize: number;
}

/** Rust's `f64 as u64`: truncating, saturating, NaN → 0. */
const f64ToU64 = (x: number): bigint => (!(x > 0) ? 0n : x >= 2 ** 64 ? U64_MAX : BigInt(Math.trunc(x)));

const invalid = (msg: string) => new CharmsError('INVALID_INPUT', msg);

function checkedU64(x: bigint, what: string): bigint {
  if (x > U64_MAX) throw invalid(`${what} overflow u64`);
  return x;
}

const utxoDisplay = (u: { txid: Uint8Array; vout: number }) => `${toHex(reversed(u.txid))}:${u.vout}`;

/**
 * The change address's network as the prover decides it (main, testnet4, regtest on a mock prover
 * only), or the reference's refusal. `spell prove` calls it before any contract runs.
 */
export function changeAddressNetwork(changeAddress: string, mock: boolean): BitcoinNetwork {
  const address = decodeAddress(changeAddress);
  if (isTagValidFor(address.tag, 'main')) return BITCOIN_NETWORKS.mainnet;
  if (isTagValidFor(address.tag, 'testnet4')) return BITCOIN_NETWORKS.testnet4;
  if (isTagValidFor(address.tag, 'regtest') && mock) return BITCOIN_NETWORKS.regtest;
  throw invalid(`Unsupported network of change address: Address<NetworkUnchecked>(${address.canonical})`);
}

/** Runs the Bitcoin preflight; throws INVALID_INPUT / INSUFFICIENT_FUNDS with the reference's texts. */
export function preflightProveRequest(a: PreflightArgs): PreflightResult {
  const network = changeAddressNetwork(a.changeAddress, a.mock);

  const scrolls = new Set(a.scrolls ?? []);
  const allValid = a.coins.every((o, i) => (scrolls.has(i) && o.dest.length === 0) || isStandardScriptFor(o.dest, network));
  if (!allValid) throw invalid('all output addresses must be valid for the network');

  let totalSatsIn = 0n;
  a.ins.forEach((u, i) => {
    const v = a.prevOutValues[i];
    if (v === undefined) throw invalid(`utxo not found in prev_txs: ${utxoDisplay(u)}`);
    totalSatsIn = checkedU64(totalSatsIn + v, 'total input sats');
  });
  let totalSatsOut = 0n;
  for (const o of a.coins) totalSatsOut = checkedU64(totalSatsOut + o.amount, 'total output sats');

  const unsigned: BitcoinTx = {
    version: 2,
    locktime: 0,
    inputs: a.ins.map((u) => ({ txid: u.txid, vout: u.vout, scriptSig: new Uint8Array(0), sequence: 0xffffffff, witness: [] })),
    outputs: a.coins.map((c) => ({ value: c.amount, script: c.dest })),
  };
  const vsize = txVsize(unsigned);
  // Stricter than the reference (which builds them): refused before any proof is paid for.
  checkFeeRate(a.feeRate, a.maxFeeRate);
  checkNotDust(a.coins, scrolls);
  // inputs and coins with signatures, the OP_RETURN spell (at least its estimate) and the change
  checkStandardWeight(txWeight(unsigned) + 65 * a.ins.length + 4 * (a.spellCborLenForEstimate + 12) + 172, 'the transaction');
  const units = 111n + (BigInt(a.spellCborLenForEstimate) + 372n) / 4n + BigInt(vsize) + 28n * BigInt(a.ins.length);
  const estimatedBitcoinFee = checkedU64(units * f64ToU64(a.feeRate), 'estimated bitcoin fee');

  const required = checkedU64(totalSatsOut + a.charmsFee, 'total required sats (outputs + fees)');
  const requiredWithFee = checkedU64(required + estimatedBitcoinFee, 'total required sats (outputs + fees)');
  if (!(totalSatsIn > requiredWithFee))
    throw new CharmsError(
      'INSUFFICIENT_FUNDS',
      // the reference's sentence, then the numbers it was decided on (the reference must exceed, not equal)
      `spell inputs must have sufficient value to cover outputs and fees: inputs ${totalSatsIn} sats; outputs ${totalSatsOut} sats + charms fee ${a.charmsFee} sats + estimated bitcoin fee ${estimatedBitcoinFee} sats (at ${a.feeRate} sat/vB) = ${requiredWithFee} sats; ${requiredWithFee + 1n - totalSatsIn} sats short: add a funding input or lower the fee rate`,
    );
  return { network, totalSatsIn, totalSatsOut, charmsFee: a.charmsFee, estimatedBitcoinFee, txVsize: vsize };
}
