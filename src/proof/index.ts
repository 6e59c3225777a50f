/** charms-ts/proof: spell proof verification (one, or batched), mock proving, the spell verifying keys. */
export { verifySpellProof, verifySpellProofs, initProofBackend, type SpellProofCheck } from './verify.js';
export { proveMock, verifyMockProof } from './mock.js';
export { spellVkFor } from './constants.js';
