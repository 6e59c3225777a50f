/** charms-ts/prover: the prove pipeline and the client of a remote proving service. */
export { proveSpellTx } from './prove.js';
export { proveRemote } from './client.js';
export { checkProverAnswer, describeAnswer, type AnswerCheck, type ExtraOutput } from './answer-check.js';
