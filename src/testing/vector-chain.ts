/**
 * Blocks for the index's tests from the real transactions of `vectors/chain` (INDEX.md there says
 * what each is) plus fabricated plain transactions, mined into a fake node
 * (`fake-bitcoind.ts`; nothing checks scripts, so a fabricated transaction may spend any output).
 *
 * - `VECTOR_SETS` groups the vector names: valid spells v2…v12, the v15 conflict set (six synthetic
 *   spells, dummy proofs, all spending `1dc0a4ca…:0` and `:1`) and its parent, negatives, mock.
 * - `charmOutpoints(txid)`: the outputs a verified vector spell puts charms on (from the
 *   oracle's expected file), so a test can spend or burn them.
 * - `spendTx(outpoints)`: a fabricated non-spell transaction spending them (a burn, for the index).
 * - `fillerTx(n)`: plain transactions that spend nothing real, to fill blocks.
 * - `linearVectorBlocks()`: a default chain layout (each inner array one block's transactions).
 *
 * Reads `../shared` through shared.ts: callers check `sharedOrSkip(t)` first.
 */
import { readSharedJson, readSharedText } from './shared.js';
import { parseTx, serializeTx, txidHex, type BitcoinTx, type TxOut } from '../bitcoin/tx.js';
import { fromHex, reversed } from '../util/bytes.js';

export interface ChainVector {
  /** File name without `.bitcoin.hex`: the txid, or `neg-N` for the tampered copies. */
  name: string;
  txid: string;
  hex: string;
  bytes: Uint8Array;
}

export interface Outpoint {
  txid: string;
  vout: number;
}

/** Vector names by role (txids in full; INDEX.md and expected/ORACLE.md describe them). */
export const VECTOR_SETS = {
  /** Spells with real proofs that verify: v2, v4, v6, v7, v8, v9, v10, v12. */
  valid: [
    '1acee7fb7c922b205e7c63abffe39a53527d4d7bbb0e5327a9b72350115a7ebb', // v2
    '55777ba206bf747724a4e96586f2d912a77baa8a15a4c63a0b510531ad5fa65e', // v2
    'aea10a1e1591b5ac852c574c0a419c1c18296a1c9f86412caf0d0e0616b3e4e4', // v2
    '9c048eca509e609f81a5024930f1e793b3ab82ce953b025e0d4d0a0c342a5b1a', // v4
    'b84e628a14d6ddaf8e0532a6708dc282444fb21f4049ed40e92753d00e1f0deb', // v4 regtest
    '86081de981f11ba05701dd20be846897b6154d510abef824895c7a8282f131a9', // v6, spends acc8e739…:0
    '1a34811c66f4dfd9953c02c95d33d96f775870ac8a111c43ca6ab17d3f3a4528', // v7
    '2efcde0d11cca5c23a415de6cb917e6da5b747975911e7855eb29d0737a68873', // v8
    '8d70833ad1ce5d84cffb76fdc6038d669c6cf1808f3f84f3f0d83cad712e33a3', // v9
    '7269cf1b2bc9e513440224ebebabcbd3a4a544d0adb6c5d8ca302953958bc4af', // v10
    '283559062cb6b651eb4a5f557ba4f67efa9aae55ba2278d4f10f35cbefaa84a5', // v12
  ],
  /** A v10 spell whose verification fails (see its expected file). */
  failing: ['fccc35220e23db0ab9a91af41bc568f988f8cadee99a28e1f1a81a07549b178f'],
  /** The transaction the conflict set spends (no spell). */
  conflictParent: '1dc0a4ca1013a12f5b20c63d075347cf4940ba441fe3888a9533500ab80a62fa',
  /** Six synthetic v15 spells, dummy proofs (present, not verified), all spending conflictParent:0 and :1. */
  conflicts: [
    '88690370e5aa1a14debd73c70e8bff7008cfadff984550f7dbd5d4f317ce0f5e',
    '9ac2c6e168daee2c16c617f02c0ee1aff4b96dc2d58b4670e652f2e860bbb8cc',
    '4d91f5a640963de05b0370172a58fc865bedd35d8bfc5d555d9b9907d4a15dd3',
    '212c8fbc61cea3e4c10b2f696dd3ec46e65ccba59e12f4215521de8838c17111',
    '8f1decd455c508532a03a372e858b89fb17861c417d749412d05dfadba338db8',
    'ee708f25b780b65770be59e69c907b31ba3407c76dc3dbfe459cd637d14b4a2a',
  ],
  /** Mock spells: accepted only in mock mode (f0e7de06… has an empty proof). */
  mock: ['74ea380c3e854ea591be665fab91b486c9d87e1178737960c3a2c00bcfefd16e', 'f0e7de0638638e7192e8225ddbc9c1fa90d1dcfd7181bc610f654887b2005bb6'],
  /** No spell: plain payments, a non-spell OP_RETURN, the unsigned commit tx 86081de9… spends. */
  plain: [
    '4125a400a51213b256b3b8087717e429712787d943e65f045063f4ea011bfe36',
    'd8fa4cdade7ac3dff64047dc73b58591ebe638579881b200d4fea68fc84521f0',
    '0d4fb0b026c366eec15e5abef7e6461d6464d4e24bc91c367ba4c4142cc24fa6',
    'acc8e7394517f4424133a2ed98fb9e676d5267df3b4e3167b0412f3333d6eb67',
  ],
  /** Tampered copies of real spells (expected/ORACLE.md): each has its own txid. */
  negatives: ['neg-1', 'neg-2', 'neg-3', 'neg-4', 'neg-5'],
} as const;

const cache = new Map<string, ChainVector>();

/** One vector transaction by name (txid or `neg-N`). */
export function loadVector(name: string): ChainVector {
  let v = cache.get(name);
  if (!v) {
    const hex = readSharedText('vectors', 'chain', `${name}.bitcoin.hex`).trim();
    const bytes = fromHex(hex, name);
    v = { name, txid: txidHex(parseTx(bytes)), hex, bytes };
    cache.set(name, v);
  }
  return v;
}

/** The outputs a verified vector spell puts charms on (empty for anything that does not verify). */
function charmOutpoints(txid: string): Outpoint[] {
  const e = readSharedJson<{ verified?: boolean; spell?: { tx?: { outs?: Record<string, unknown>[] } } | null }>(
    'vectors',
    'chain',
    'expected',
    `${txid}.json`,
  );
  if (!e.verified || !e.spell?.tx?.outs) return [];
  return e.spell.tx.outs.flatMap((o, vout) => (o && Object.keys(o).length > 0 ? [{ txid, vout }] : []));
}

const OP_TRUE = Uint8Array.of(0x51);

function fabricate(inputs: Outpoint[], outputs: TxOut[], tag: number): ChainVector {
  const tx: BitcoinTx = {
    version: 2,
    inputs: inputs.map((o) => ({ txid: reversed(fromHex(o.txid, 'txid', 32)), vout: o.vout, scriptSig: new Uint8Array(0), sequence: 0xfffffffd, witness: [] })),
    outputs,
    // the tag makes otherwise equal fabrications distinct transactions
    locktime: tag >>> 0,
  };
  const bytes = serializeTx(tx, { witness: false });
  const hex = Buffer.from(bytes).toString('hex');
  return { name: `fabricated-${tag}`, txid: txidHex(tx), hex, bytes };
}

/**
 * A fabricated non-spell transaction spending `outpoints` (a charm burn, for the index), paying
 * `outputs` (default one 1000-sat OP_TRUE output). `tag` distinguishes otherwise equal ones (an
 * RBF replacement spends the same outpoints with another tag).
 */
export function spendTx(outpoints: Outpoint[], o: { outputs?: TxOut[]; tag?: number } = {}): ChainVector {
  return fabricate(outpoints, o.outputs ?? [{ value: 1000n, script: OP_TRUE }], o.tag ?? 0);
}

/** `n` plain transactions spending made-up outpoints, distinct for distinct `seed`s. */
export function fillerTx(n: number, seed = 0): ChainVector[] {
  return Array.from({ length: n }, (_, i) => {
    const prev = Buffer.alloc(32);
    prev.writeUInt32LE(seed >>> 0, 0);
    prev.writeUInt32LE(i, 4);
    prev.write('filler', 8);
    return fabricate([{ txid: prev.toString('hex'), vout: 0 }], [{ value: 546n, script: OP_TRUE }], 0);
  });
}

/**
 * A default linear layout: the conflict parent and plain txs, then the valid spells by era
 * (acc8e739… before 86081de9… which spends it), the failing v10, the mock spells and the negatives, one conflict
 * (88690370…), and a block burning the first charm output of 1acee7fb… and 9c048eca…. Each inner
 * array is one block (mine them in order on a fresh fake node).
 */
export function linearVectorBlocks(): ChainVector[][] {
  const v = (names: readonly string[]) => names.map(loadVector);
  const [v2a, v2b, v2c, v4a, v4b, v6, v7, v8, v9, v10, v12] = VECTOR_SETS.valid;
  const burn = spendTx([...charmOutpoints(v2a).slice(0, 1), ...charmOutpoints(v4a).slice(0, 1)], { tag: 1 });
  return [
    v([VECTOR_SETS.conflictParent, ...VECTOR_SETS.plain.slice(0, 3)]),
    v([v2a, v2b, v2c]),
    v([v4a, v4b, VECTOR_SETS.plain[3], v6]),
    v([v7, v8]),
    v([v9, v10, v12, ...VECTOR_SETS.failing]),
    v([...VECTOR_SETS.mock, ...VECTOR_SETS.negatives]),
    v([VECTOR_SETS.conflicts[0]]),
    [burn, ...fillerTx(3, 1)],
  ];
}
