/**
 * Shared test fixtures: the AssemblyScript template app built from source, and a funding
 * transaction from the vectors to spend.
 */
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { buildApp } from '../app/project.js';
import { templatesDir } from '../app/new.js';
import { fromHex, toHex } from '../util/bytes.js';
import { CborWriter } from '../codec/cbor.js';
import type { UtxoId } from '../model/primitives.js';
import { parseSpellText } from '../model/inputs.js';
import { bareSpellInputs, type ChainTx, type ProveRequest } from '../model/request.js';

let built: Promise<{ wasm: Uint8Array; vk: string; path: string }> | undefined;

/** Builds templates/assemblyscript once per process (asc from the dev dependencies). */
export function templateApp(): Promise<{ wasm: Uint8Array; vk: string; path: string }> {
  built ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'charms-as-app-'));
    cpSync(join(templatesDir(), 'assemblyscript'), join(dir, 'app'), { recursive: true });
    const path = await buildApp(join(dir, 'app'), () => {});
    const wasm = readFileSync(path);
    return { wasm, vk: toHex(sha256(wasm)), path };
  })();
  return built;
}

export interface Funding {
  hex: string;
  txid: string;
  changeAddress: string;
  dest: string;
}

/** The funding transaction of the build vectors: outputs 0 (50 000 sats) and 1 (20 000 sats). */
export function funding(read: (...p: string[]) => string): Funding {
  const v = JSON.parse(read('vectors', 'bitcoin-tx-build-vectors.json'));
  return { hex: v.prev_tx_hex, txid: v.prev_txid, changeAddress: v.change_address, dest: v.change_script };
}

export const identityFor = (utxo: string): string => toHex(sha256(new TextEncoder().encode(utxo)));

/** A Bitcoin ProveRequest for a spell in YAML, paying change to the funding fixture's address. */
export function bitcoinProveRequest(f: Funding, spellYaml: string, prevHex: string[], opts: Partial<ProveRequest> = {}): ProveRequest {
  return { ...bareSpellInputs(parseSpellText(spellYaml), prev(prevHex), 'bitcoin'), change_address: f.changeAddress, fee_rate: 2, ...opts };
}

const prev = (hexes: string[]): ChainTx[] => hexes.map((hex) => ({ chain: 'bitcoin', hex }));

/**
 * A minimal Conway transaction paying ADA to the given raw addresses (what a wallet's funding
 * transaction looks like to the builder and the checker: they read outputs, not witnesses).
 */
export function cardanoFundingTx(outputs: { address: Uint8Array; lovelace: bigint; assets?: [string, string, bigint][] }[], salt = 0): Uint8Array {
  const w = new CborWriter();
  w.arrayHeader(4);
  w.mapHeader(3);
  w.int(0);
  w.head(6, 258);
  w.arrayHeader(1);
  w.arrayHeader(2);
  w.bytes(new Uint8Array(32).fill(0xf0 + (salt & 0x0f)));
  w.int(salt);
  w.int(1);
  w.arrayHeader(outputs.length);
  for (const o of outputs) {
    w.mapHeader(2);
    w.int(0);
    w.bytes(o.address);
    w.int(1);
    if (!o.assets?.length) w.int(o.lovelace);
    else {
      // [coin, {policy: {name: qty}}], one asset per policy
      w.arrayHeader(2);
      w.int(o.lovelace);
      w.mapHeader(o.assets.length);
      for (const [policy, name, qty] of o.assets) {
        w.bytes(fromHex(policy));
        w.mapHeader(1);
        w.bytes(fromHex(name));
        w.int(qty);
      }
    }
  }
  w.int(2);
  w.int(200_000);
  w.mapHeader(0);
  w.byte(0xf5);
  w.byte(0xf6);
  return w.finish();
}

/** A Cardano ProveRequest (mock-friendly) for a spell in YAML. */
export function cardanoProveRequest(
  spellYaml: string,
  prev: Uint8Array[],
  changeAddress: string,
  collateral: UtxoId,
  opts: Partial<ProveRequest> = {},
): ProveRequest {
  const prevTxs = prev.map((b): ChainTx => ({ chain: 'cardano', hex: toHex(b) }));
  return {
    ...bareSpellInputs(parseSpellText(spellYaml), prevTxs, 'cardano'),
    change_address: changeAddress,
    fee_rate: 2,
    collateral_utxo: collateral,
    ...opts,
  };
}
