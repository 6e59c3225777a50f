/** Prerequisite spells verified on the proof threads before the (synchronous) spell check. */
import { preverifyPrevSpells } from '../checker/prev-spells.js';
import type { ProveRequest } from '../model/request.js';
import type { ProofBackend } from './backend.js';
import type { ProofWorkers } from './proof-workers.js';

/** With proof threads, verifies the prerequisite spells there first (the checker then finds them done). */
export async function preverify(req: ProveRequest, deps: { backend: ProofBackend; proofWorkers?: ProofWorkers | undefined }): Promise<void> {
  const workers = deps.proofWorkers;
  if (workers) await preverifyPrevSpells(req.prev_txs, deps.backend.mock, (checks) => workers.verify(checks));
}
