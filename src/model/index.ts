/** charms-ts/model: the data model with both faces (CBOR and JSON/YAML): apps, UTXO ids, spells, prove requests, CLI input files. */
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
} from './primitives.js';
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
} from './spell.js';
export {
  parseChain,
  chainTxFromValue,
  chainTxToValue,
  proveRequestFromValue,
  proveRequestToValue,
  type Chain,
  type ChainTx,
  type ProveRequest,
  type SpellInputs,
} from './request.js';
export { parseSpellText, parsePrivateInputs, parseBeamedFrom, parseAppSignatures, parsePrevTx } from './inputs.js';
