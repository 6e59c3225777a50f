/**
 * Long-running services load the WASM pairing backends once (BN254 for real proofs, a second
 * mcl instance on BLS12-381 for mock proofs); one-shot commands keep pure JS unless they verify
 * many proofs. Node only.
 */
import { initPairingBackend } from './verify.js';
import { useMockCurve } from './mock.js';
import { loadMclMockCurve } from './mock-mcl.js';

/** `mockProofs`: also load the BLS12-381 instance (≈50–100 ms more), for services in mock mode. */
export async function useFastProofBackend(warn: (msg: string) => void, opts: { mockProofs?: boolean } = {}): Promise<string> {
  let real: string;
  try {
    real = await initPairingBackend('mcl-wasm');
  } catch (e) {
    warn(`WASM pairing backend unavailable, verifying with pure JS: ${(e as Error).message}`);
    real = 'noble';
  }
  if (!opts.mockProofs) return real;
  let mock: string;
  try {
    useMockCurve(await loadMclMockCurve());
    mock = 'mcl-wasm';
  } catch (e) {
    warn(`WASM BLS12-381 backend unavailable, mock proofs with pure JS: ${(e as Error).message}`);
    mock = 'noble';
  }
  return real === mock ? real : `${real} (mock proofs: ${mock})`;
}
