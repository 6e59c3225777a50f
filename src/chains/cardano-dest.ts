/** Cardano `dest` bytes: raw address bytes, and the apps' proxy-script address. */
export { cardanoAddressBytes } from '../cardano/address.js';
export { proxyAddressForApps as cardanoProxyAddressForApps } from '../cardano/scripts.js';
