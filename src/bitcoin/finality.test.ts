import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readSharedText, sharedOrSkip } from '../testing/shared.js';

test('Bitcoin finality proofs (merkle block + headers) of real mainnet transactions', async (t) => {
  if (!sharedOrSkip(t)) return;
  const { verifyBitcoinFinality, targetFromBits, workOf } = await import('./finality.js');
  const { parseYaml } = await import('../codec/yaml.js');
  const { chainTxFromValue } = await import('../model/request.js');
  for (const id of ['8d70833ad1ce5d84cffb76fdc6038d669c6cf1808f3f84f3f0d83cad712e33a3', '0d4fb0b026c366eec15e5abef7e6461d6464d4e24bc91c367ba4c4142cc24fa6']) {
    const tx = chainTxFromValue(parseYaml(readSharedText('vectors', 'chain', `${id}.bitcoin.finality.yaml`)), id);
    assert.ok(tx.chain === 'bitcoin' && tx.proof);
    if (tx.chain !== 'bitcoin' || !tx.proof) continue;
    assert.ok(verifyBitcoinFinality(tx.hex, tx.proof.proof, tx.proof.headers), id);
    assert.equal(verifyBitcoinFinality(tx.hex, tx.proof.proof, tx.proof.headers.slice(0, 1)), false, 'not enough work');
    assert.equal(verifyBitcoinFinality(tx.hex, tx.proof.proof, [...tx.proof.headers].reverse()), false, 'headers must chain');
    const otherTx = readSharedText('vectors', 'chain', '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36.bitcoin.hex').trim();
    assert.equal(verifyBitcoinFinality(otherTx, tx.proof.proof, tx.proof.headers), false, 'the block must contain the tx');
  }
  assert.ok(workOf(targetFromBits(0x1701e2a0)) * 6n >= workOf(targetFromBits(0x16507000)));
});
