/**
 * Cardano protocol parameters the builder uses (mainnet, protocol 10.0, as embedded by the
 * reference in its Cardano builder). The PlutusV3 cost model must equal the chain's, or the
 * ledger rejects `script_data_hash`: when the chain changes it, pass a protocol-parameters JSON
 * file (`cardano-cli query protocol-parameters` format) instead — see `loadCardanoProtocolParams`.
 */
import { CharmsError } from '../errors.js';

export interface CardanoProtocolParams {
  txFeeFixed: bigint;
  txFeePerByte: bigint;
  utxoCostPerByte: bigint;
  minFeeRefScriptCostPerByte: bigint;
  /** Prices per ex-unit as exact fractions (numerator / denominator). */
  priceMemory: [bigint, bigint];
  priceSteps: [bigint, bigint];
  maxTxSize: number;
  maxValueSize: number;
  maxTxExecutionUnits: { memory: bigint; steps: bigint };
  plutusV3CostModel: bigint[];
}

const PLUTUS_V3_COST_MODEL: readonly number[] = [
  100788, 420, 1, 1, 1000, 173, 0, 1, 1000, 59957, 4, 1, 11183, 32, 201305, 8356, 4, 16000, 100, 16000, 100, 16000, 100, 16000, 100, 16000, 100, 16000, 100,
  100, 100, 16000, 100, 94375, 32, 132994, 32, 61462, 4, 72010, 178, 0, 1, 22151, 32, 91189, 769, 4, 2, 85848, 123203, 7305, -900, 1716, 549, 57, 85848, 0, 1,
  1, 1000, 42921, 4, 2, 24548, 29498, 38, 1, 898148, 27279, 1, 51775, 558, 1, 39184, 1000, 60594, 1, 141895, 32, 83150, 32, 15299, 32, 76049, 1, 13169, 4,
  22100, 10, 28999, 74, 1, 28999, 74, 1, 43285, 552, 1, 44749, 541, 1, 33852, 32, 68246, 32, 72362, 32, 7243, 32, 7391, 32, 11546, 32, 85848, 123203, 7305,
  -900, 1716, 549, 57, 85848, 0, 1, 90434, 519, 0, 1, 74433, 32, 85848, 123203, 7305, -900, 1716, 549, 57, 85848, 0, 1, 1, 85848, 123203, 7305, -900, 1716, 549,
  57, 85848, 0, 1, 955506, 213312, 0, 2, 270652, 22588, 4, 1457325, 64566, 4, 20467, 1, 4, 0, 141992, 32, 100788, 420, 1, 1, 81663, 32, 59498, 32, 20142, 32,
  24588, 32, 20744, 32, 25933, 32, 24623, 32, 43053543, 10, 53384111, 14333, 10, 43574283, 26308, 10, 16000, 100, 16000, 100, 962335, 18, 2780678, 6, 442008, 1,
  52538055, 3756, 18, 267929, 18, 76433006, 8868, 18, 52948122, 18, 1995836, 36, 3227919, 12, 901022, 1, 166917843, 4307, 36, 284546, 36, 158221314, 26549, 36,
  74698472, 36, 333849714, 1, 254006273, 72, 2174038, 72, 2261318, 64571, 4, 207616, 8310, 4, 1293828, 28716, 63, 0, 1, 1006041, 43623, 251, 0, 1, 100181, 726,
  719, 0, 1, 100181, 726, 719, 0, 1, 100181, 726, 719, 0, 1, 107878, 680, 0, 1, 95336, 1, 281145, 18848, 0, 1, 180194, 159, 1, 1, 158519, 8942, 0, 1, 159378,
  8813, 0, 1, 107490, 3298, 1, 106057, 655, 1, 1964219, 24520, 3,
];

export const MAINNET_PROTOCOL_PARAMS: CardanoProtocolParams = {
  txFeeFixed: 155381n,
  txFeePerByte: 44n,
  utxoCostPerByte: 4310n,
  minFeeRefScriptCostPerByte: 15n,
  priceMemory: [577n, 10000n],
  priceSteps: [721n, 10000000n],
  maxTxSize: 16384,
  maxValueSize: 5000,
  maxTxExecutionUnits: { memory: 16500000n, steps: 10000000000n },
  plutusV3CostModel: PLUTUS_V3_COST_MODEL.map(BigInt),
};

/** An exact fraction from a decimal number as JSON prints it (`0.0577`, `7.21e-05`). */
function decimalFraction(x: unknown, path: string): [bigint, bigint] {
  const s = typeof x === 'number' && Number.isFinite(x) && x >= 0 ? String(x) : undefined;
  const m = s && /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(s);
  if (!m) throw new CharmsError('INVALID_INPUT', `${path}: expected a non-negative number`);
  const frac = m[2] ?? '';
  let num = BigInt(m[1]! + frac);
  let den = 10n ** BigInt(frac.length);
  const exp = Number(m[3] ?? 0);
  if (exp >= 0) num *= 10n ** BigInt(exp);
  else den *= 10n ** BigInt(-exp);
  return [num, den];
}

function intField(o: Record<string, unknown>, k: string): bigint {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
    throw new CharmsError('INVALID_INPUT', `protocol parameters: ${k} must be a non-negative integer`);
  return BigInt(v);
}

/**
 * Protocol parameters from JSON text in the `cardano-cli query protocol-parameters` format (the
 * reference's embedded `protocol.json` has it too). Fields the builder does not use are ignored.
 */
export function parseCardanoProtocolParams(text: string): CardanoProtocolParams {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw new CharmsError('INVALID_INPUT', 'protocol parameters: not JSON', { cause: e });
  }
  if (typeof j !== 'object' || j === null) throw new CharmsError('INVALID_INPUT', 'protocol parameters: expected an object');
  const o = j as Record<string, unknown>;
  const prices = (o.executionUnitPrices ?? {}) as Record<string, unknown>;
  const maxUnits = (o.maxTxExecutionUnits ?? {}) as Record<string, unknown>;
  const v3 = ((o.costModels ?? {}) as Record<string, unknown>).PlutusV3;
  if (!Array.isArray(v3) || v3.length === 0 || v3.length > 1000 || !v3.every((c) => typeof c === 'number' && Number.isSafeInteger(c)))
    throw new CharmsError('INVALID_INPUT', 'protocol parameters: costModels.PlutusV3 must be a list of integers');
  return {
    txFeeFixed: intField(o, 'txFeeFixed'),
    txFeePerByte: intField(o, 'txFeePerByte'),
    utxoCostPerByte: intField(o, 'utxoCostPerByte'),
    minFeeRefScriptCostPerByte: o.minFeeRefScriptCostPerByte === undefined ? 0n : intField(o, 'minFeeRefScriptCostPerByte'),
    priceMemory: decimalFraction(prices.priceMemory, 'executionUnitPrices.priceMemory'),
    priceSteps: decimalFraction(prices.priceSteps, 'executionUnitPrices.priceSteps'),
    maxTxSize: Number(intField(o, 'maxTxSize')),
    maxValueSize: Number(intField(o, 'maxValueSize')),
    maxTxExecutionUnits: { memory: intField(maxUnits, 'memory'), steps: intField(maxUnits, 'steps') },
    plutusV3CostModel: (v3 as number[]).map(BigInt),
  };
}
