/**
 * What a spell verification thread does with one task (verify-worker.ts; verify-pool.ts explains
 * the pool): the library's batch verifier, with the pairing backends loaded once per thread.
 */
import { encodeSpellCbor, type NormalizedSpell } from '../model/spell.js';
import { useFastProofBackend } from '../groth16/init.js';
import { prepareProofKeys } from '../groth16/verify.js';
import { checkedSpellCbor } from '../groth16/spell.js';
import { inThreadSpellCheck } from './block-write.js';

export interface VerifyTask {
  id: number;
  raws: Uint8Array[];
  mock: boolean;
}
/**
 * The verified spells (null: no valid spell) as structured clones, with their normalized CBOR
 * (what the index stores; encoded here, off the event loop). The `Data` values of a clone arrive
 * as plain objects, which `revivedSpell` (verify-pool.ts) turns back into ValueMap and Tagged.
 */
export type VerifyReply = { id: number; spells: ({ spell: NormalizedSpell; cbor: Uint8Array } | null)[] } | { id: number; failure: string };

/** The answer to one task, on this thread (the worker's message handler; tests call it too). */
export function answerVerifyTask(t: VerifyTask): VerifyReply {
  try {
    return { id: t.id, spells: inThreadSpellCheck(t.raws, t.mock).map((s) => (s ? { spell: s, cbor: checkedSpellCbor(s) ?? encodeSpellCbor(s) } : null)) };
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
