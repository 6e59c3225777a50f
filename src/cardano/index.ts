/** charms-ts/cardano: Charms native-asset names, addresses, Scrolls finality and the spell-transaction builder on Cardano. */
export { policyIdForApp, assetNameForApp, proxyAddressForApps } from './scripts.js';
export { cardanoAddressBytes } from './address.js';
export { verifyCardanoFinality } from './finality.js';
export { buildCardanoTx, resolvePrevOutputs, type CardanoBuildArgs, type CardanoBuildResult } from './builder.js';
export { MAINNET_PROTOCOL_PARAMS, parseCardanoProtocolParams, type CardanoProtocolParams } from './protocol-params.js';
export { cardanoTxMoves, LearnedTokens, type CardanoTxMoves } from './charm-moves.js';
