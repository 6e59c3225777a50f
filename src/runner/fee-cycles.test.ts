/**
 * The prover's protocol fee (`total_cycles × fee_rate / 10^6 + fee_base`, summed over apps as the
 * reference's `get_charms_fee`) computed from our cycles equals the fee from real wasmi 1.1.0's
 * fuel (vectors/runner-fuel/corpus.json) for each fee settings shape on Bitcoin.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { charmsFee, parseFeeSettings } from '../bitcoin/fee-settings.js';
import { readCorpus } from '../testing/fuel-corpus/corpus.js';
import { fromHex } from '../util/bytes.js';
import { runApp } from './index.js';

const ADDR = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const shapes = {
  'rate only': 'fee_rate: 1500\nfee_base: 0\n',
  'base only': 'fee_rate: 0\nfee_base: 700\n',
  'rate and base': 'fee_rate: 1500\nfee_base: 700\n',
};

test('fees from our cycles equal fees from wasmi fuel: rate only, base only, both (two apps summed)', async () => {
  const corpus = readCorpus();
  const runs = ['template-as-toad-nft-mint-payload', 'call-indirect'].map((n) => corpus.cases.find((c) => c.name === n)!);
  let ours = 0n;
  let wasmi = 0n;
  for (const c of runs) {
    const r = await runApp({ wasm: fromHex(c.wasm), stdin: c.stdin ? fromHex(c.stdin) : new Uint8Array(0), inThread: true });
    assert.equal(r.ok, true, r.error);
    ours += r.cycles;
    wasmi += BigInt(c.expect.fuel);
  }
  assert.equal(ours, wasmi);
  assert.ok(wasmi > 200_000n, `total ${wasmi}`);
  for (const [shape, y] of Object.entries(shapes)) {
    const s = parseFeeSettings(`fee_addresses:\n  bitcoin:\n    main: ${ADDR}\n${y}`);
    const rate = BigInt(/fee_rate: (\d+)/.exec(y)?.[1] ?? 0);
    const base = BigInt(/fee_base: (\d+)/.exec(y)?.[1] ?? 0);
    assert.equal(charmsFee(s, ours), (wasmi * rate) / 1_000_000n + base, shape);
  }
});
