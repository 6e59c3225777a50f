/**
 * Where a spell sits in a Bitcoin transaction, located exactly as charms-client's bitcoin_tx.rs
 * does (error texts included):
 * - protocol ≥ 9: the single output whose second instruction pushes `spell`, its third
 *   instruction pushing the CBOR of `(spell, proof)` and nothing after it;
 * - older spells: the Taproot script-path envelope of the last input,
 *   `OP_FALSE OP_IF "spell" <pushes…> OP_ENDIF`, pushes concatenated.
 * The caller tries the OP_RETURN path, CBOR-decodes, and on any failure falls back to the witness
 * path (whose errors are then the ones reported). Browser-safe.
 */
import { CharmsError } from '../errors.js';
import { concatBytes, concatByteList, equalBytes, utf8 } from '../util/bytes.js';
import type { BitcoinTx, TxIn } from './tx.js';
import { instructions, opcodeName, OP_ENDIF, OP_IF, OP_RETURN, pushData, type Instruction } from './script.js';

const SPELL_MARKER = utf8('spell');

const noSpell = (msg: string) => new CharmsError('NO_SPELL', msg);

/** One step of a rust-bitcoin instruction iterator: an instruction, `'end'`, or `'error'`. */
type Step = Instruction | 'end' | 'error';
function stepper(script: Uint8Array): () => Step {
  const it = instructions(script);
  let failed = false;
  return () => {
    if (failed) return 'end'; // rust-bitcoin's iterator is empty after an error
    try {
      const r = it.next();
      return r.done ? 'end' : r.value;
    } catch {
      failed = true;
      return 'error';
    }
  };
}

const isPush = (s: Step): s is Instruction & { push: Uint8Array } => typeof s === 'object' && s.push !== undefined;

/** First instruction parses (any opcode or push) and the second is a push of exactly `spell`. */
function isSpellOpReturn(script: Uint8Array): boolean {
  const next = stepper(script);
  const first = next();
  if (first === 'end' || first === 'error') return false;
  const second = next();
  return isPush(second) && equalBytes(second.push, SPELL_MARKER);
}

/** The payload pushed by the single `OP_RETURN "spell"` output (protocol ≥ 9). NO_SPELL otherwise. */
export function opReturnSpellPayload(tx: BitcoinTx): Uint8Array {
  const outs = tx.outputs.filter((o) => isSpellOpReturn(o.script));
  if (outs.length !== 1) throw noSpell('expected exactly one spell OP_RETURN output');
  const next = stepper(outs[0]!.script);
  next();
  next();
  const payload = next();
  if (!isPush(payload)) throw noSpell('expected spell data payload in OP_RETURN');
  if (next() !== 'end') throw noSpell('unexpected additional data in OP_RETURN');
  return Uint8Array.from(payload.push);
}

const TAPROOT_ANNEX_PREFIX = 0x50;
const TAPROOT_LEAF_MASK = 0xfe;

/**
 * rust-bitcoin 0.32 `P2TrSpend::from_witness`: the leaf script and control block of a script-path
 * spend (the annex, a last item starting with 0x50, is skipped when there are ≥ 3 items).
 */
function taprootScriptPath(w: Uint8Array[]): { script: Uint8Array; control: Uint8Array } | undefined {
  const n = w.length;
  const annex = n >= 2 && w[n - 1]![0] === TAPROOT_ANNEX_PREFIX;
  if (n < 2 || (n === 2 && annex)) return undefined; // key-path spend
  return annex ? { script: w[n - 3]!, control: w[n - 2]! } : { script: w[n - 2]!, control: w[n - 1]! };
}

/** Debug text of a step as rust-bitcoin prints `Option<Result<Instruction, script::Error>>`. */
function debugStep(s: Step): string {
  if (s === 'end') return 'None';
  if (s === 'error') return 'Some(Err(EarlyEndOfScript))';
  if (s.push === undefined) return `Some(Ok(Op(${opcodeName(s.op)})))`;
  return `Some(Ok(PushBytes(PushBytes([${[...s.push].join(', ')}]))))`;
}

/**
 * anyhow's `ensure!(lhs == rhs)` message: the condition, then ` (lhs vs rhs)` when both Debug
 * texts are at most 40 bytes without spaces.
 */
function ensureFailed(condition: string, lhs: string, rhs: string): CharmsError {
  const short = (s: string) => s.length <= 40 && !/[ \n]/.test(s);
  const detail = short(lhs) && short(rhs) ? ` (${lhs} vs ${rhs})` : '';
  return noSpell(`Condition failed: \`${condition}\`${detail}`);
}

/** The envelope payload in the last input's Taproot leaf script (protocol < 9). NO_SPELL otherwise. */
export function witnessSpellPayload(tx: BitcoinTx): Uint8Array {
  const last: TxIn | undefined = tx.inputs[tx.inputs.length - 1];
  if (!last) throw noSpell('transaction does not have inputs');
  const path = taprootScriptPath(last.witness);
  if (!path) throw noSpell('no control block');
  if (path.control.length !== 33) throw noSpell('the Taproot tree contains more than one leaf: only a single script is supported');
  // `taproot_leaf_script()` rejects a control block whose leaf version would be the annex prefix.
  if ((path.control[0]! & TAPROOT_LEAF_MASK) === TAPROOT_ANNEX_PREFIX) throw noSpell("no spell data in the last input's witness");

  const next = stepper(path.script);
  const first = next();
  if (!(isPush(first) && first.push.length === 0))
    throw ensureFailed('instructions.next() == Some(Ok(Instruction::PushBytes(PushBytes::empty())))', debugStep(first), 'Some(Ok(PushBytes(PushBytes([]))))');
  const second = next();
  if (!(typeof second === 'object' && second.push === undefined && second.op === OP_IF))
    throw ensureFailed('instructions.next() == Some(Ok(Instruction::Op(OP_IF)))', debugStep(second), 'Some(Ok(Op(OP_IF)))');
  const marker = next();
  if (!isPush(marker)) throw noSpell('no spell data');
  if (!equalBytes(marker.push, SPELL_MARKER)) throw noSpell('no spell marker');
  const chunks: Uint8Array[] = [];
  for (;;) {
    const s = next();
    if (isPush(s)) chunks.push(s.push);
    else if (typeof s === 'object' && s.op === OP_ENDIF) break;
    else throw noSpell('unexpected opcode');
  }
  return concatByteList(chunks);
}

/** The OP_RETURN output script carrying a spell payload: `OP_RETURN push("spell") push(payload)`. */
export const opReturnSpellScript = (payload: Uint8Array): Uint8Array => concatBytes(Uint8Array.of(OP_RETURN), pushData(SPELL_MARKER), pushData(payload));
