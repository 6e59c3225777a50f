import type { Run } from '../define.js';

/**
 * The reference downloads SP1's Groth16 circuit artifacts (several GB) for local proving. This
 * build never runs the Groth16 prover itself: the Prover Network or a self-hosted sp1-cluster
 * gateway wraps proofs where the circuits live, and verification needs only the small verifying
 * keys compiled into the program. So there is nothing to install; the command says so and succeeds.
 */
const run: Run = async (_a, ctx) => {
  ctx.stderr(
    'Nothing to install: this build does not run SP1 locally. Groth16 wrapping happens on the SP1 Prover Network ' +
      '(APP_ZK_PROVER=network) or on a self-hosted sp1-cluster gateway (ZK_GPU_SERVICE_URL), which hold the circuit files; ' +
      'proof verification uses verifying keys built into charms-ts. Check a real-proving setup with `charms-prover network status`.\n',
  );
};
export default run;
