/** The Scrolls canister client (Cardano co-signature and finality, Bitcoin Scrolls outputs). */
export { ScrollsClient, type CardanoScrollsSigner, type ScrollsClientOptions } from './client.js';
export { scrollsSettings, type ScrollsSettings } from '../settings/scrolls.js';
