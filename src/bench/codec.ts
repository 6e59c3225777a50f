/**
 * Codec benchmark: serde_json-compatible parsing of a multi-megabyte request (base64 binaries)
 * and of many small objects. Targets: 8 MiB in well under 2 s, 200 000 objects under 3 s.
 */
import { parseJson, toJsonPretty } from '../codec/json.js';
import { ValueMap } from '../codec/value.js';
import { timeMedian } from './measure.js';

export async function run(): Promise<void> {
  const blob = Buffer.alloc(6 * 1024 * 1024, 7).toString('base64');
  const big = toJsonPretty(ValueMap.of({ binaries: ValueMap.of({ ['a'.repeat(64)]: blob }), n: [1n, 2n, 3n] }));
  const many = '[' + Array.from({ length: 200_000 }, (_, i) => `{"k${i}":${i},"s":"x\\ny"}`).join(',') + ']';
  const bigMs = timeMedian(5, () => void parseJson(big), 1);
  const manyMs = timeMedian(3, () => void parseJson(many), 1);
  console.log(`json: parse ${(big.length / 2 ** 20).toFixed(1)} MiB request: median ${bigMs.toFixed(0)} ms (target < 2000)`);
  console.log(`json: parse 200 000 small objects (${(many.length / 2 ** 20).toFixed(1)} MiB): median ${manyMs.toFixed(0)} ms (target < 3000)`);
}
