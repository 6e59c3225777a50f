/**
 * What a spell verification thread does with one task (verify-worker.ts; verify-pool.ts explains
 * the pool): the library's batch verifier, with the pairing backends loaded once per thread.
 */
import type { NormalizedSpell } from '../model/spell.js';
import { useFastProofBackend } from '../proof/init.js';
import { prepareProofKeys } from '../proof/verify.js';
import { inThreadSpellCheck } from './block-write.js';

export interface VerifyTask {
  id: number;
  raws: Uint8Array[];
  mock: boolean;
}
/**
 * The verified spells (null: no valid spell) as structured clones: their `Data` values arrive as
 * plain objects, which `revivedSpell` (verify-pool.ts) turns back into ValueMap and Tagged.
 */
export type VerifyReply = { id: number; spells: (NormalizedSpell | null)[] } | { id: number; failure: string };

/** The answer to one task, on this thread (the worker's message handler; tests call it too). */
export function answerVerifyTask(t: VerifyTask): VerifyReply {
  try {
    return { id: t.id, spells: inThreadSpellCheck(t.raws, t.mock).map((s) => s ?? null) };
  } catch (e) {
    return { id: t.id, failure: e instanceof Error ? e.message : String(e) };
  }
}

let real: Promise<unknown> | undefined;
let withMock: Promise<unknown> | undefined;
/** The backends once per thread: BN254 always, the BLS12-381 instance only once a mock batch comes. */
export const verifyBackends = (mock: boolean): Promise<unknown> =>
  mock
    ? (withMock ??= useFastProofBackend(() => {}, { mockProofs: true }).then(prepareProofKeys))
    : (real ??= useFastProofBackend(() => {}).then(prepareProofKeys));
