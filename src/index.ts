/**
 * charms-ts: the Charms protocol's tooling in TypeScript. The browser-safe read side is also
 * available alone as `charms-ts/verify`.
 */
export { CharmsError, HTTP_STATUS, type ErrorCode } from './errors.js';
export { extractAndVerifySpell, verifySpells, spellOrNone, isNoSpell, spellToJson, spellToYaml, type TxInput, type SpellVerdict } from './verify/index.js';
export { SpellBatcher } from './verify/batcher.js';
export { encodeCbor, decodeCbor, CborReader, CborWriter } from './codec/cbor.js';
export { parseJson, toJsonCompact, toJsonPretty } from './codec/json.js';
export { parseYaml, toYaml } from './codec/yaml.js';
export { ValueMap, Tagged, type Value } from './codec/value.js';
export {
  appFromString,
  appToString,
  appEquals,
  compareApps,
  utxoIdFromString,
  utxoIdToString,
  txidToDisplay,
  txidFromDisplay,
  type App,
  type Data,
  type B32,
  type UtxoId,
} from './model/primitives.js';
export {
  CURRENT_VERSION,
  spellFromValue,
  spellToValue,
  encodeSpellCbor,
  stripForChain,
  type NormalizedSpell,
  type NormalizedTransaction,
  type NormalizedCharms,
  type Charms,
  type NativeOutput,
  type VersionedApp,
  type AppSignature,
  type BeamSource,
} from './model/spell.js';
export { parseChain, chainTxFromValue, chainTxToValue, proveRequestFromValue, proveRequestToValue, type Chain, type ChainTx, type ProveRequest, type SpellInputs } from './model/request.js';
export { parseSpellText, parsePrivateInputs, parseBeamedFrom, parseAppSignatures, parsePrevTx } from './model/inputs.js';
export { parseTx, serializeTx, txid, txidHex, type BitcoinTx } from './bitcoin/tx.js';
export { addressToScript, scriptToAddress } from './bitcoin/address.js';
export { buildSpellTx } from './bitcoin/builder.js';
export { verifySpellProof, verifySpellProofs, initProofBackend, type SpellProofCheck } from './proof/verify.js';
export { proveMock, verifyMockProof } from './proof/mock.js';
export { spellVkFor } from './proof/constants.js';
export { runApp, validateAppModule, shutdownRunner } from './runner/index.js';
export { checkSpell, type CheckArgs, type CheckResult } from './checker/check.js';
export { proveSpellTx } from './prover/prove.js';
export { proveRemote } from './prover/client.js';
export { checkProverAnswer, describeAnswer, type AnswerCheck, type ExtraOutput } from './prover/answer-check.js';
export { startProveServer } from './services/prove-server.js';
export { policyIdForApp, assetNameForApp, proxyAddressForApps } from './cardano/scripts.js';
export { cardanoAddressBytes } from './cardano/address.js';
export { verifyCardanoFinality } from './cardano/finality.js';
export { buildCardanoTx, resolvePrevOutputs, type CardanoBuildArgs, type CardanoBuildResult } from './cardano/builder.js';
export { MAINNET_PROTOCOL_PARAMS, parseCardanoProtocolParams, type CardanoProtocolParams } from './cardano/protocol-params.js';
export { startQueryServer } from './query/service.js';
export { spellQueryValue } from './query/shape.js';
export { generateAppKey, signBinary, verifyBinarySignature, vkOfBinary, vkOfPublicKey } from './keys/app-key.js';
export { ScrollsClient, scrollsSettings, type CardanoScrollsSigner, type ScrollsClientOptions, type ScrollsSettings } from './scrolls/index.js';
