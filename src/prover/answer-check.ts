/**
 * What a wallet checks before signing what a remote prover returned (`checkProverAnswer`): the
 * prover builds the transaction, so a hostile or broken one could return a transaction that
 * spends the user's inputs to itself. The answer must be one transaction of the request's chain
 * that spends exactly the requested inputs (in order on Bitcoin; as a set on Cardano, which sorts
 * them), has every requested output at its index with its amount and script, and carries the
 * requested spell with a proof that verifies. What else it pays — the prover's fee outputs, the
 * Cardano spell output, change, the network fee — is reported, for the user to see before signing.
 */
import { CharmsError } from '../errors.js';
import { equalBytes, fromHex, toHex } from '../util/bytes.js';
import { encodeSpellCbor, type NormalizedSpell } from '../model/spell.js';
import { utxoIdToString, txidToDisplay, type UtxoId } from '../model/primitives.js';
import type { ChainTx, ProveRequest } from '../model/request.js';
import { parseTx, txid as txidOf } from '../bitcoin/tx.js';
import { addressToScript } from '../bitcoin/address.js';
import { parseCardanoTx, parseInputs, parseOutputs, bodyField } from '../cardano/tx.js';
import { cardanoAddressBytes } from '../cardano/address.js';
import { canonicalContent, resolvePrevOutputs } from '../cardano/builder.js';
import { extractAndVerifySpell } from '../verify/index.js';

export interface ExtraOutput {
  index: number;
  /** sats or lovelace. */
  amount: bigint;
  /** Output script (Bitcoin) or raw address (Cardano), hex. */
  to: string;
  /** Pays the request's change address. */
  change: boolean;
}

export interface AnswerCheck {
  chain: 'bitcoin' | 'cardano';
  /** The spell the transaction carries (its proof verified). */
  spell: NormalizedSpell;
  /** Outputs beyond the requested ones: the prover's fee outputs, the spell output, change. */
  extra: ExtraOutput[];
  /** Paid to others than the requested outputs and the change address (the prover and the protocol), sats or lovelace. */
  proverFee: bigint;
  /** Inputs − outputs: what the miners (Bitcoin) or the ledger fee (Cardano) take. */
  networkFee: bigint;
  /** Back to the change address. */
  change: bigint;
}

const refuse = (m: string) => new CharmsError('PROVER_ANSWER_INVALID', `the prover's answer does not match the request: ${m}; do not sign it`);

/** The spell as compared: the CBOR the proof commits to, with the mock flag the answer must carry. */
const spellBytes = (s: NormalizedSpell, mock: boolean): string => toHex(encodeSpellCbor({ ...s, mock }));

/**
 * Checks a prover's answer against the request (see the module comment); throws a CharmsError
 * saying what does not match. `mock`: accept (only) mock proofs, as a mock prover makes.
 */
export function checkProverAnswer(req: ProveRequest, txs: readonly ChainTx[], opts: { mock?: boolean } = {}): AnswerCheck {
  const mock = opts.mock ?? false;
  if (txs.length !== 1) throw refuse(`expected one transaction, got ${txs.length}`);
  const t = txs[0]!;
  if (t.chain !== req.chain) throw refuse(`a ${t.chain} transaction for a ${req.chain} spell`);
  // the spell is read after the inputs and outputs are checked, so a mismatch is named as such
  const verified = (): NormalizedSpell => {
    try {
      return extractAndVerifySpell(t.chain === 'bitcoin' ? { bitcoin: t.hex } : { cardano: t.hex }, mock);
    } catch (e) {
      throw refuse(`its spell or proof does not verify (${(e as Error).message})`);
    }
  };
  const ins = req.spell.tx.ins ?? [];
  const coins = req.spell.tx.coins ?? [];
  // Cardano: the proof commits to `content` as the read side derives it from the built output
  const askedCoins = req.chain === 'cardano' ? coins.map((c, i) => ({ ...c, content: canonicalContent(c.content, `coins[${i}].content`) })) : coins;
  const asked = { ...req.spell, tx: { ...req.spell.tx, ins, ...(req.spell.tx.coins ? { coins: askedCoins } : {}) } };
  // Scrolls outputs get their script from the canister on the prover: compare without them
  const scrolls = new Set(req.spell.tx.scrolls ?? []);
  const sameSpell = (got: NormalizedSpell) => {
    const g = { ...got, tx: { ...got.tx, ins: got.tx.ins ?? [] } };
    if (scrolls.size > 0 && g.tx.coins && asked.tx.coins)
      g.tx.coins = g.tx.coins.map((c, i) => (scrolls.has(i) && asked.tx.coins![i]!.dest.length === 0 ? { ...c, dest: new Uint8Array(0) } : c));
    return spellBytes(g, mock) === spellBytes(asked, mock);
  };
  return t.chain === 'bitcoin' ? checkBitcoin(req, t.hex, verified, ins, coins, scrolls, sameSpell) : checkCardano(req, t.hex, verified, ins, coins, sameSpell);
}

type Coins = NonNullable<NormalizedSpell['tx']['coins']>;

function sameInputs(got: UtxoId[], want: UtxoId[]): boolean {
  return got.length === want.length && got.every((u, i) => equalBytes(u.txid, want[i]!.txid) && u.vout === want[i]!.vout);
}

function checkBitcoin(
  req: ProveRequest,
  hex: string,
  verified: () => NormalizedSpell,
  ins: UtxoId[],
  coins: Coins,
  scrolls: Set<number>,
  sameSpell: (s: NormalizedSpell) => boolean,
): AnswerCheck {
  let tx: ReturnType<typeof parseTx>;
  try {
    tx = parseTx(fromHex(hex, 'prover answer'));
  } catch (e) {
    throw refuse(`it is not a Bitcoin transaction (${(e as Error).message})`);
  }
  const got = tx.inputs.map((i) => ({ txid: i.txid, vout: i.vout }));
  if (!sameInputs(got, ins)) throw refuse(`it spends ${got.map(utxoIdToString).join(', ') || 'nothing'} instead of ${ins.map(utxoIdToString).join(', ')}`);
  coins.forEach((c, i) => {
    const o = tx.outputs[i];
    if (!o) throw refuse(`requested output #${i} is missing`);
    if (o.value !== c.amount) throw refuse(`output #${i} holds ${o.value} sats instead of ${c.amount}`);
    if (!(scrolls.has(i) && c.dest.length === 0) && !equalBytes(o.script, c.dest))
      throw refuse(`output #${i} pays ${toHex(o.script)} instead of ${toHex(c.dest)}`);
  });
  const spell = verified();
  if (!sameSpell(spell)) throw refuse('the spell it carries is not the requested one');
  // input values from the request's prev_txs
  const byTxid = new Map<string, ReturnType<typeof parseTx>>();
  for (const p of req.prev_txs)
    if (p.chain === 'bitcoin') byTxid.set(txidToDisplay(txidOf(parseTx(fromHex(p.hex, 'prev_txs')))), parseTx(fromHex(p.hex, 'prev_txs')));
  let totalIn = 0n;
  for (const u of ins) {
    const v = byTxid.get(txidToDisplay(u.txid))?.outputs[u.vout]?.value;
    if (v === undefined) throw new CharmsError('INVALID_INPUT', `utxo not found in prev_txs: ${utxoIdToString(u)}`);
    totalIn += v;
  }
  const changeScript = addressToScript(req.change_address).script;
  const extra = tx.outputs
    .slice(coins.length)
    .map((o, k): ExtraOutput => ({ index: coins.length + k, amount: o.value, to: toHex(o.script), change: equalBytes(o.script, changeScript) }));
  return summary('bitcoin', spell, extra, totalIn - tx.outputs.reduce((s, o) => s + o.value, 0n));
}

function checkCardano(
  req: ProveRequest,
  hex: string,
  verified: () => NormalizedSpell,
  ins: UtxoId[],
  coins: Coins,
  sameSpell: (s: NormalizedSpell) => boolean,
): AnswerCheck {
  let tx: ReturnType<typeof parseCardanoTx>;
  try {
    tx = parseCardanoTx(fromHex(hex, 'prover answer'));
  } catch (e) {
    throw refuse(`it is not a Cardano transaction (${(e as Error).message})`);
  }
  const key = (u: UtxoId) => utxoIdToString(u);
  const got = parseInputs(tx).map(key).sort();
  const want = ins.map(key).sort();
  if (got.join() !== want.join()) throw refuse(`it spends ${got.join(', ') || 'nothing'} instead of ${want.join(', ')}`);
  const outs = parseOutputs(tx);
  coins.forEach((c, i) => {
    const o = outs[i];
    if (!o) throw refuse(`requested output #${i} is missing`);
    if (o.lovelace !== c.amount) throw refuse(`output #${i} holds ${o.lovelace} lovelace instead of ${c.amount}`);
    if (!equalBytes(o.address, c.dest)) throw refuse(`output #${i} pays ${toHex(o.address)} instead of ${toHex(c.dest)}`);
  });
  const spell = verified();
  if (!sameSpell(spell)) throw refuse('the spell it carries is not the requested one');
  const fee = bodyField(tx, 2);
  if (typeof fee !== 'bigint') throw refuse('it has no fee');
  const changeAddress = cardanoAddressBytes(req.change_address);
  const extra = outs
    .slice(coins.length)
    .map((o, k): ExtraOutput => ({ index: coins.length + k, amount: o.lovelace, to: toHex(o.address), change: equalBytes(o.address, changeAddress) }));
  // the fee and the outputs must add up to the inputs (the ledger's balance; no minting of ADA)
  const prev = resolvePrevOutputs(
    ins,
    req.prev_txs.filter((p) => p.chain === 'cardano').map((p) => fromHex(p.hex, 'prev_txs')),
  );
  const totalIn = prev.reduce((s, o) => s + o.lovelace, 0n);
  const totalOut = outs.reduce((s, o) => s + o.lovelace, 0n);
  if (totalIn !== totalOut + fee) throw refuse(`inputs of ${totalIn} lovelace do not balance outputs of ${totalOut} plus the fee of ${fee}`);
  return summary('cardano', spell, extra, fee);
}

function summary(chain: 'bitcoin' | 'cardano', spell: NormalizedSpell, extra: ExtraOutput[], networkFee: bigint): AnswerCheck {
  if (networkFee < 0n) throw refuse('its outputs exceed its inputs');
  const change = extra.filter((o) => o.change).reduce((s, o) => s + o.amount, 0n);
  const proverFee = extra.filter((o) => !o.change).reduce((s, o) => s + o.amount, 0n);
  return { chain, spell, extra, proverFee, networkFee, change };
}

/** One line for the user: what the transaction pays beyond the requested outputs. */
export function describeAnswer(c: AnswerCheck): string {
  const unit = c.chain === 'bitcoin' ? 'sats' : 'lovelace';
  const paid = c.extra.filter((o) => !o.change && o.amount > 0n).length;
  return `prover's answer checked: inputs, outputs and spell as requested, proof verified; beyond the requested outputs it pays ${c.proverFee} ${unit} to the prover and protocol (${paid} output(s)), ${c.networkFee} ${unit} network fee and ${c.change} ${unit} change`;
}
