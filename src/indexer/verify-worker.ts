/**
 * A spell verification thread of the index (see verify-pool.ts): loads the WASM pairing backends
 * once, then verifies batches of transactions with the library's batch verifier, off the event
 * loop. Message in: {id, raws, mock}; out: {id, spells} (the normalized spell's CBOR per
 * verified transaction, null for "no valid spell") or {id, failure} for an unexpected error.
 */
import { parentPort } from 'node:worker_threads';
import { answerVerifyTask, verifyBackends, type VerifyTask } from './verify-task.js';

const port = parentPort;
if (port)
  port.on('message', (t: VerifyTask) => {
    void verifyBackends(t.mock).then(
      () => port.postMessage(answerVerifyTask(t)),
      (e: unknown) => port.postMessage({ id: t.id, failure: `loading the pairing backends failed: ${String(e)}` }),
    );
  });
