/** charms-ts/groth16: spell proof verification (one, or batched), mock proving, the spell verifying keys. */
export { verifySpellProof, verifySpellProofs, initPairingBackend, type SpellProofCheck } from './verify.js';
/** @deprecated the old name of `initPairingBackend` ("proof backend" is the prover's `ProofBackend`). */
export { initPairingBackend as initProofBackend } from './verify.js';
export { proveMock, verifyMockProof } from './mock.js';
export { spellVkFor } from './constants.js';
