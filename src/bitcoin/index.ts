/** charms-ts/bitcoin: Bitcoin transactions, addresses and the spell-transaction builder. */
export { parseTx, serializeTx, txid, txidHex, type BitcoinTx } from './tx.js';
export { addressToScript, scriptToAddress } from './address.js';
export { buildSpellTx } from './builder.js';
