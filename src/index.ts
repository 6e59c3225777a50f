/**
 * charms-ts: the Charms protocol's tooling in TypeScript. Each domain is also a subpath of its
 * own (`charms-ts/verify`, `/codec`, `/model`, `/bitcoin`, `/cardano`, `/groth16`, `/runner`,
 * `/checker`, `/prover`, `/server`, `/query`, `/keys`, `/scrolls`), which loads only that
 * domain; the heavy clients (ioredis, the IC agent) load when first used.
 */
export { CharmsError, HTTP_STATUS, type ErrorCode } from './errors.js';
export {
  extractAndVerifySpell,
  verifySpells,
  spellOrNone,
  isNoSpell,
  spellToJson,
  spellToYaml,
  type TaggedTx,
  type TaggedTx as TxInput,
  type SpellVerdict,
} from './verify/index.js';
export { SpellBatcher } from './verify/batcher.js';
export * from './codec/index.js';
export * from './model/index.js';
export * from './bitcoin/index.js';
export * from './groth16/index.js';
export { runApp, validateAppModule, shutdownRunner } from './runner/index.js';
export * from './checker/index.js';
export * from './prover/index.js';
export * from './prove-server/index.js';
export * from './cardano/index.js';
export * from './query/index.js';
export * from './keys/index.js';
export { ScrollsClient, scrollsSettings, type CardanoScrollsSigner, type ScrollsClientOptions, type ScrollsSettings } from './scrolls/index.js';
export { OgmiosFollower, OgmiosSession, type OgmiosOptions, type FollowerOptions as OgmiosFollowerOptions } from './sources/ogmios.js';
