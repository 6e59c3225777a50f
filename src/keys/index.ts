/** charms-ts/keys: app signing keys (versioned apps). */
export { generateAppKey, signBinary, verifyBinarySignature, vkOfBinary, vkOfPublicKey } from './app-key.js';
