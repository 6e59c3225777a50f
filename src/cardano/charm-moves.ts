/**
 * What one Cardano transaction does to charms, for the Cardano index (the reference's
 * `CardanoTx::virtual_spell`, charms-client/src/cardano_tx.rs):
 * - with a verified spell: the spell's charms on its outputs; outputs in `beamed_outs` are
 *   recorded as beamed (with their destination hash), not held;
 * - without one: every output holding native assets of a learned token app (policy id + asset
 *   name, tag `t`) holds exactly that quantity of the app's charm; NFTs and other tags are not
 *   carried (the reference's "TODO add support for NFTs"): spent, they burn;
 * - a phase-2 invalid transaction (`is_valid` false) spends its collateral inputs, not its
 *   inputs, and creates only its collateral return (output #outputs.length); it carries no spell.
 * The result's rows have the fields of the index's `CharmOutputWrite` / `InputWrite`
 * (indexer/store.ts, a higher layer: shapes, not imports). Amounts are exact u64 bigints.
 */
import { encodeCbor } from '../codec/cbor.js';
import { appToString, type App } from '../model/primitives.js';
import type { NormalizedSpell } from '../model/spell.js';
import { toHex } from '../util/bytes.js';
import { assetNameForApp, policyIdForApp } from './assets.js';
import { bodyField, parseInputs, parseOutputs, type CardanoOutput, type CardanoTx } from './tx.js';

export interface CardanoCharmOutput {
  txid: string;
  txIndex: number;
  vout: number;
  app: string;
  amount: bigint | null;
  data: Uint8Array | null;
  /** The output's raw address bytes. */
  script: Uint8Array;
  /** Lovelace. */
  sats: bigint;
}

interface CardanoBeamedOutput extends CardanoCharmOutput {
  /** `beamed_outs[vout]`: the destination hash on the other chain, hex. */
  beamedTo: string;
}

export interface CardanoInput {
  txid: string;
  txIndex: number;
  vin: number;
  prevTxid: string;
  prevVout: number;
}

export interface CardanoTxMoves {
  outputs: CardanoCharmOutput[];
  beamed: CardanoBeamedOutput[];
  /** The inputs this transaction really spends (collateral when it failed phase 2). */
  inputs: CardanoInput[];
  /** Token apps a verified spell lists: from now on their native assets move as charms. */
  learned: App[];
  /** True when the charms came from native assets (no verified spell). */
  virtual: boolean;
}

/** Learned token apps by `policy hex + asset name hex` (the first learned keeps a colliding key). */
export class LearnedTokens {
  private readonly byAsset = new Map<string, App>();
  add(app: App): boolean {
    if (app.tag !== 't') return false;
    const k = toHex(policyIdForApp(app)) + toHex(assetNameForApp(app));
    if (this.byAsset.has(k)) return false;
    this.byAsset.set(k, app);
    return true;
  }
  get(policy: string, name: string): App | undefined {
    return this.byAsset.get(policy + name);
  }
}

const displayTxid = (internal: Uint8Array): string => toHex(Uint8Array.from(internal).reverse());

/**
 * The moves of transaction `tx` (id `txid`, position `txIndex` in its block); `spell` is its
 * verified spell (undefined: none, or one that did not verify).
 */
export function cardanoTxMoves(tx: CardanoTx, txid: string, txIndex: number, spell: NormalizedSpell | undefined, learned: LearnedTokens): CardanoTxMoves {
  const failed = !tx.isValid;
  const ins = failed ? collateralInputs(tx) : parseInputs(tx);
  const inputs = ins.map((u, vin) => ({ txid, txIndex, vin, prevTxid: displayTxid(u.txid), prevVout: u.vout }));
  const outs: [number, CardanoOutput][] = failed ? collateralReturn(tx) : parseOutputs(tx).map((o, i) => [i, o]);
  const m: CardanoTxMoves = { outputs: [], beamed: [], inputs, learned: [], virtual: spell === undefined || failed };
  const row = (vout: number, o: CardanoOutput, app: App, amount: bigint | null, data: Uint8Array | null): CardanoCharmOutput => ({
    txid,
    txIndex,
    vout,
    app: appToString(app),
    amount,
    data,
    script: o.address,
    sats: o.lovelace,
  });
  if (spell !== undefined && !failed) {
    const apps = spell.app_public_inputs.map(([a]) => a);
    for (const a of apps) if (learned.add(a)) m.learned.push(a);
    spell.tx.outs.forEach((charms, vout) => {
      const o = outs[vout]?.[1];
      if (!o) return;
      const beamedTo = spell.tx.beamed_outs?.get(vout);
      for (const [k, d] of [...charms.entries()].sort(([a], [b]) => a - b)) {
        const app = apps[k];
        if (!app) continue;
        const fungible = app.tag === 't' && typeof d === 'bigint';
        const r = row(vout, o, app, fungible ? (d as bigint) : null, fungible ? null : encodeCbor(d));
        if (beamedTo !== undefined) m.beamed.push({ ...r, beamedTo: toHex(beamedTo) });
        else m.outputs.push(r);
      }
    });
    return m;
  }
  for (const [vout, o] of outs)
    for (const [policy, names] of o.assets)
      for (const [name, q] of names) {
        const app = learned.get(policy, name);
        if (app !== undefined) m.outputs.push(row(vout, o, app, q, null));
      }
  m.outputs.sort((a, b) => a.vout - b.vout || (a.app < b.app ? -1 : 1));
  return m;
}

function collateralInputs(tx: CardanoTx): { txid: Uint8Array; vout: number }[] {
  const c = bodyField(tx, 13);
  if (c === undefined) return [];
  // same shape as the inputs: read through parseInputs on a body holding them as key 0
  return parseInputs({ ...tx, body: { entries: [[0n, c]] } as unknown as CardanoTx['body'] });
}

function collateralReturn(tx: CardanoTx): [number, CardanoOutput][] {
  const r = bodyField(tx, 16);
  if (r === undefined) return [];
  const n = parseOutputs(tx).length;
  const fake = { ...tx, body: { entries: [[1n, [r]]] } as unknown as CardanoTx['body'] };
  return [[n, parseOutputs(fake)[0]!]];
}
