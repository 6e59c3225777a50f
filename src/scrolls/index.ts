/** The Scrolls canister client (Cardano co-signature and finality, Bitcoin Scrolls outputs). */
export { ScrollsClient, type CardanoScrollsSigner, type ScrollsClientOptions, type ScrollsKeys } from './client.js';
export { scrollsSettings, describeScrolls, SCROLLS_DEFAULTS, SCROLLS_ENV, type ScrollsSettings } from '../settings/scrolls.js';
