/**
 * mcl-wasm keeps one curve per module instance. The package's shared instance serves whichever
 * curve claims it first: the BN254 verifier (servers, batch verification) or, in a process that
 * only makes mock proofs, the BLS12-381 mock curve. Browser-safe.
 */
type Curve = 'bn254' | 'bls12-381';
let owner: Curve | undefined;

/** True if `curve` may initialise the shared instance (it is free or already its own). */
export function claimSharedMcl(curve: Curve): boolean {
  owner ??= curve;
  return owner === curve;
}
