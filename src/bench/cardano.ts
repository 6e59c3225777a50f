/**
 * Cardano read side: median time to extract and verify one real Cardano transaction (warm), per
 * vector, with the pure-JS and the WASM pairing backends; plus the parse-and-fill part alone.
 */
import { extractAndVerifySpell } from '../verify/index.js';
import { initPairingBackend, prepareProofKeys } from '../groth16/verify.js';
import { hasShared, readSharedText } from '../testing/shared.js';
import { parseCardanoTx } from '../cardano/tx.js';
import { findCardanoSpell, fillFromCardanoTx } from '../cardano/extract.js';
import { fromHex } from '../util/bytes.js';
import { median, timeRuns } from './measure.js';

const time = (n: number, f: () => void): number[] => timeRuns(n, f, 3);

export async function run(): Promise<void> {
  if (!hasShared) return console.log('skipped: test vectors not found (CHARMS_SHARED_DIR)');
  const txs: [string, string][] = [
    ['v11 361927ae', '361927aed267ef049a5b9315aa7296493b385938d73340146b0af5d4637a02cf'],
    ['v11 712fcb00', '712fcb00421d163794c22eef627c5e49f3d3f19ea95953871f90286e1bf6f66c'],
    ['v10 28bbfea2', '28bbfea24dc7c74db73a5c02da45df0415d279cc29f09eb4736cbe0faf75457b'],
  ].map(([name, id]) => [name!, readSharedText('vectors', 'chain', `${id}.cardano.hex`).trim()]);
  prepareProofKeys();
  for (const backend of ['noble', 'mcl-wasm'] as const) {
    try {
      await initPairingBackend(backend);
    } catch (e) {
      console.log(`backend ${backend} unavailable: ${(e as Error).message}`);
      continue;
    }
    for (const [name, hex] of txs) {
      const ts = time(30, () => extractAndVerifySpell({ cardano: hex }, false));
      console.log(`extract+verify Cardano ${name} (${backend}): median ${median(ts).toFixed(2)} ms (min ${Math.min(...ts).toFixed(2)}, n=30)`);
    }
  }
  const bytes = fromHex(txs[0]![1]);
  const ts = time(200, () => {
    const tx = parseCardanoTx(bytes);
    fillFromCardanoTx(findCardanoSpell(tx).spell, tx);
  });
  console.log(`parse + extract + fill (no proof) Cardano v11: median ${(median(ts) * 1000).toFixed(0)} µs (n=200)`);
}
