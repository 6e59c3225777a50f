/**
 * A proof worker thread (see proof-workers.ts): loads the WASM pairing backends once, then
 * verifies spell proofs and makes mock proofs for the proving server, off its event loop.
 * Messages in: {id, verify: SpellProofCheck[]}, {id, prove: publicValues} or {id, backend: true};
 * out: {id, errors} ({code, message} or null per check), {id, proof}, {id, backend} (which
 * pairing libraries the thread loaded), or {id, failure} for an unexpected error.
 */
import { parentPort } from 'node:worker_threads';
import type { CharmsError } from '../errors.js';
import { useFastProofBackend } from '../groth16/init.js';
import { verifySpellProofs, type SpellProofCheck } from '../groth16/verify.js';
import { proveMock } from '../groth16/mock.js';

export type ProofTask = { id: number; verify: SpellProofCheck[] } | { id: number; prove: Uint8Array } | { id: number; backend: true };
export type ProofReply =
  | { id: number; errors: ({ code: CharmsError['code']; message: string } | null)[] }
  | { id: number; proof: Uint8Array }
  | { id: number; backend: string }
  | { id: number; failure: string };

const port = parentPort;
if (port) {
  const backends = useFastProofBackend(() => {}, { mockProofs: true });
  port.on('message', (t: ProofTask) => {
    void backends.then((backend) => {
      let reply: ProofReply;
      try {
        if ('backend' in t) reply = { id: t.id, backend };
        else if ('verify' in t) reply = { id: t.id, errors: verifySpellProofs(t.verify).map((e) => (e ? { code: e.code, message: e.message } : null)) };
        else reply = { id: t.id, proof: proveMock(t.prove) };
      } catch (e) {
        reply = { id: t.id, failure: e instanceof Error ? e.message : String(e) };
      }
      port.postMessage(reply);
    });
  });
}
