/** Long-running services load the WASM pairing backend once; one-shot commands keep pure JS. */
import { initProofBackend } from './verify.js';

export async function useFastProofBackend(warn: (msg: string) => void): Promise<string> {
  try {
    return await initProofBackend('mcl-wasm');
  } catch (e) {
    warn(`WASM pairing backend unavailable, verifying with pure JS: ${(e as Error).message}`);
    return 'noble';
  }
}
