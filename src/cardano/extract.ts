/**
 * Spells in Cardano transactions (the reference's `CardanoTx::extract_and_verify_spell`):
 * 1. the spell is the inline datum (Plutus bytes, `CBOR((spell, proof))`) of the first of the
 *    last two outputs, from the end, that has one;
 * 2. the spell's input order comes from the withdraw (Reward) redeemer: Plutus bytes holding
 *    `CBOR(Vec<u32>)`, `ins[i] = tx_inputs[permutation[i]]` (Cardano sorts inputs canonically);
 * 3. `coins[i]` = `{amount: lovelace, dest: raw address, content}` for the spell's outputs, with
 *    `content` (V11+) = the output's assets minus the CNTs of its charms, datum, script ref;
 * 4. outputs must carry exactly the CNTs of their charms and sit at the proxy script address of
 *    their non-token apps (and not at the empty set's one);
 * 5. the Groth16 proof is verified over the public values of the filled spell.
 * Browser-safe: no Node built-ins.
 */
import { CharmsError } from '../errors.js';
import { decodeCbor } from '../codec/cbor.js';
import type { Value } from '../codec/value.js';
import { equalBytes } from '../util/bytes.js';
import { appToString, type App, type Data, type UtxoId } from '../model/primitives.js';
import type { NativeOutput, NormalizedSpell } from '../model/spell.js';
import { decodeSpellAndProof, verifyFilledSpell, type SpellAndProof } from '../groth16/spell.js';
import { parseCardanoTx, parseInputs, parseOutputs, parseRedeemers, type Assets, type CardanoOutput, type CardanoTx } from './tx.js';
import { expectedTokens, isTokenApp } from './assets.js';
import { proxyScriptHashForApps } from './scripts.js';
import { outputContentValue, subtractAssets } from './content.js';

export { parseInputs, parseOutputs, type CardanoOutput } from './tx.js';

const invalid = (m: string) => new CharmsError('INVALID_SPELL', m);

/** Redeemer tag of withdrawals (`Reward`). */
const REWARD = 3;

/** The spell payload: Plutus bytes in an inline datum of one of the last two outputs. */
export function findSpellPayload(outs: CardanoOutput[]): Uint8Array {
  for (let i = outs.length - 1; i >= Math.max(0, outs.length - 2); i--) {
    const d = outs[i]!.datum;
    if (d !== undefined && 'inline' in d && d.inline instanceof Uint8Array) return d.inline;
  }
  throw new CharmsError('NO_SPELL', 'Transaction has no spell output');
}

/** Finds and decodes `(spell, proof)`; NO_SPELL / CBOR_DECODE / INVALID_TX otherwise. */
export function findCardanoSpell(tx: CardanoTx): SpellAndProof {
  return decodeSpellAndProof(findSpellPayload(parseOutputs(tx)));
}

/**
 * The input permutation from the first Reward redeemer whose data is Plutus bytes, checked to be
 * a bijection over `nInputs` positions.
 */
export function inputPermutation(tx: CardanoTx, nInputs: number): number[] {
  const reds = parseRedeemers(tx);
  if (reds === undefined) throw invalid('Transaction has no redeemers');
  const r = reds.find((x) => x.tag === REWARD && x.data instanceof Uint8Array);
  if (r === undefined) throw invalid('Transaction has no withdraw redeemer with input permutation');
  let perm: Value;
  try {
    perm = decodeCbor(r.data as Uint8Array, { allowTrailing: true });
  } catch (e) {
    throw new CharmsError('INVALID_SPELL', 'Failed to decode input permutation', { cause: e });
  }
  if (!Array.isArray(perm) || !perm.every((x) => typeof x === 'bigint' && x >= 0n && x <= 0xffffffffn))
    throw invalid('Failed to decode input permutation: expected a list of u32');
  const p = perm.map(Number);
  // Deliberate divergence from the reference, which accepts any index list: a list with a
  // repeated (or missing) input would let one input — and its charms — count twice in the
  // proven spell. We require a bijection over the transaction's inputs.
  const seen = new Set<number>();
  for (const x of p) {
    if (x >= nInputs || seen.has(x)) break;
    seen.add(x);
  }
  if (p.length !== nInputs || seen.size !== nInputs) throw invalid(`input permutation [${p.join(', ')}] is not a permutation of the ${nInputs} inputs`);
  return p;
}

/** The charms of spell output `i` as `[app, data]` pairs. */
function outputCharms(spell: NormalizedSpell, i: number): [App, Data][] {
  const apps = spell.app_public_inputs.map(([a]) => a);
  return [...spell.tx.outs[i]!.entries()].map(([k, d]) => {
    const app = apps[k];
    if (app === undefined) throw invalid(`output #${i}: charm refers to app #${k}, which the spell does not list`);
    return [app, d];
  });
}

/**
 * The reference's `native_out_address_complies`: an output holding non-token charms must sit at
 * the proxy script address of exactly those apps; an output without any must not sit at the
 * proxy address of the empty app set. The address needs a payment credential (not Byron).
 */
function checkOutputAddress(i: number, address: Uint8Array, charms: [App, Data][]): void {
  const type = address[0]! >> 4;
  if (type === 8) throw invalid(`output #${i}: address does not have a payment credential`);
  const paymentScript = (type & 1) === 1 ? address.subarray(1, 29) : undefined;
  const nonToken = charms.map(([a]) => a).filter((a) => !isTokenApp(a));
  const atProxy = paymentScript !== undefined && equalBytes(paymentScript, proxyScriptHashForApps(nonToken));
  if (nonToken.length > 0 && !atProxy) throw invalid(`output #${i}: charms of ${nonToken.map(appToString).join(', ')} must sit at their proxy script address`);
  if (nonToken.length === 0 && atProxy) throw invalid(`output #${i}: sits at the proxy script address of no apps`);
}

/**
 * The reference's `native_outs_comply` CNT rule: every expected CNT present with exactly the
 * expected quantity (foreign assets are fine). Note a zero expected quantity can never comply.
 */
function checkOutputTokens(i: number, present: Assets, expected: Assets): void {
  for (const [p, m] of expected)
    for (const [a, q] of m) {
      const have = present.get(p)?.get(a);
      if (have === undefined || have !== q || q === 0n)
        throw invalid(`output #${i}: expected ${q} of native token ${p}.${a} for its charms, found ${have ?? 0n}`);
    }
}

/**
 * Fills `ins` (via the permutation) and `coins` (with `content` from V11) from the transaction,
 * checking the Cardano-specific rules. `spell` is the decoded on-chain spell.
 */
export function fillFromCardanoTx(spell: NormalizedSpell, tx: CardanoTx): NormalizedSpell {
  return fill(spell, tx, parseInputs(tx), parseOutputs(tx));
}

function fill(spell: NormalizedSpell, tx: CardanoTx, inputs: UtxoId[], outs: CardanoOutput[]): NormalizedSpell {
  if (inputs.length === 0) throw invalid('Transaction has no inputs');
  if (outs.length === 0) throw invalid('Transaction has no outputs');
  if (spell.tx.ins !== undefined) throw invalid('spell must inherit inputs from the enchanted tx');
  // strict: the spell output is itself an output of the transaction
  if (spell.tx.outs.length >= outs.length) throw invalid('spell tx outs mismatch');
  const perm = inputPermutation(tx, inputs.length);
  const coins: NativeOutput[] = spell.tx.outs.map((_, i) => {
    const out = outs[i]!;
    const charms = outputCharms(spell, i);
    const beamedOut = spell.tx.beamed_outs?.has(i) ?? false;
    // beamed-out outputs carry no CNTs for their charms (those were burned on the way out)
    const expected = beamedOut ? new Map() : expectedTokens(charms);
    const rest = subtractAssets(out.assets, expected, `output #${i}`);
    checkOutputAddress(i, out.address, charms);
    checkOutputTokens(i, out.assets, expected);
    const coin: NativeOutput = { amount: out.lovelace, dest: out.address };
    if (spell.version > 10) coin.content = outputContentValue(out, rest);
    return coin;
  });
  return { ...spell, tx: { ...spell.tx, ins: perm.map((p) => inputs[p]!), coins } };
}

/**
 * Parses a Cardano transaction, extracts its spell and fills it: the filled spell and its proof,
 * not verified yet. A mock spell is refused here unless `mock` (before the costlier filling).
 */
export function extractCardanoSpell(bytes: Uint8Array, mock: boolean): SpellAndProof {
  const tx = parseCardanoTx(bytes);
  const inputs = parseInputs(tx);
  const outs = parseOutputs(tx);
  if (inputs.length === 0) throw invalid('Transaction has no inputs');
  if (outs.length === 0) throw invalid('Transaction has no outputs');
  const { spell, proof } = decodeSpellAndProof(findSpellPayload(outs));
  if (spell.mock && !mock) throw new CharmsError('PROOF_INVALID', 'spell is a mock, but we are not in mock mode');
  return { spell: fill(spell, tx, inputs, outs), proof };
}

/** Parses a Cardano transaction, extracts its spell, fills it and verifies the proof. */
export function extractAndVerifyCardano(bytes: Uint8Array, mock: boolean): NormalizedSpell {
  const { spell, proof } = extractCardanoSpell(bytes, mock);
  verifyFilledSpell(spell, proof, mock);
  return spell;
}
