/**
 * The Cardano builder's constants: the V15 protocol's on-chain fixtures (protocol-version NFT
 * UTxO, Scrolls withdraw validator and key, the default fee address), the reference's fixed
 * ex-units and fee heuristic, and the redeemer tags.
 */

/** The V15 protocol-version NFT UTxO (carries the Scrolls withdraw script as reference script). */
export const V15_REFERENCE_INPUT = { hash: '571e628237e20f35f55d62890d75a5cf9e2e43ceaaf0c8ec0c86ac56e4648e0c', index: 0 } as const;
/** Script hash of the Scrolls withdraw (stake) validator. */
export const SCROLLS_WITHDRAW_SCRIPT_HASH_HEX = '29764648940a3b7208bc99a246bc96a69817bea017560972432f076f';
/** Hash of the Scrolls Ed25519 key: the required signer the validator checks for. */
export const SCROLLS_VKEY_HASH_HEX = '15bf560dabf4fe7f7ef78ac49c4fa846ebcde7009b1e886dd70d350d';
/** The reference's default Cardano fee address (mainnet). */
export const DEFAULT_CARDANO_FEE_ADDRESS = 'addr1qyp2t40fprytezw5nnlj6qjxn82ck3yhkvdy3ze9muqzvj2x2862gdndh8y3vc3yja94sf98cyyu2qsjhy8y5949w37qyt3lnt';

/** Fixed ex-units of mint/spend redeemers and of the withdraw redeemer (the reference's). */
export const MINT_SPEND_EX_UNITS = { mem: 250_000n, steps: 150_000_000n } as const;
export const WITHDRAW_EX_UNITS = { mem: 50_000n, steps: 30_000_000n } as const;
/** The reference's fee heuristic: fee field while sizing, per-witness and change allowances. */
export const FEE_PLACEHOLDER = 500_000n;
export const SIGNATURE_OVERHEAD = 110n;
export const CHANGE_OUTPUT_OVERHEAD = 70n;
export const REF_SCRIPT_FEE_ESTIMATE = 75_000n;
/**
 * For our ledger-minimum lower bound: two vkey witnesses (the Scrolls key and one user key),
 * each `[bytes32, bytes64]` (101 bytes), plus the witness-set entry (key, tag 258, array head).
 */
export const VKEY_WITNESS_BYTES = 2n * 101n + 5n;

export const REDEEMER_SPEND = 0;
export const REDEEMER_MINT = 1;
export const REDEEMER_REWARD = 3;

/** The ledger's quantities (Coin, asset amounts) are u64. */
export const U64_MAX = (1n << 64n) - 1n;
