/**
 * Where a spell sits in a Bitcoin transaction: the `OP_RETURN "spell" <payload>` output
 * (protocol ≥ 9), or, for older spells, the Taproot script-path envelope of the last input
 * (`OP_FALSE OP_IF "spell" <chunks…> OP_ENDIF`). Error texts follow the reference.
 */
import { CharmsError } from '../errors.js';
import { concatBytes, equalBytes, utf8 } from '../util/bytes.js';
import type { BitcoinTx, TxIn } from './tx.js';
import { instructions, OP_ENDIF, OP_IF, OP_RETURN, pushData } from './script.js';

export const SPELL_MARKER = utf8('spell');

const noSpell = (msg: string) => new CharmsError('NO_SPELL', msg);

function isSpellOpReturn(script: Uint8Array): boolean {
  const it = instructions(script);
  try {
    if (it.next().done) return false; // first instruction must parse (any opcode)
    const second = it.next();
    return !second.done && second.value.push !== undefined && equalBytes(second.value.push, SPELL_MARKER);
  } catch {
    return false;
  }
}

/** The payload pushed by the single `OP_RETURN "spell"` output. */
export function opReturnSpellPayload(tx: BitcoinTx): Uint8Array {
  const outs = tx.outputs.filter((o) => isSpellOpReturn(o.script));
  if (outs.length !== 1) throw noSpell('expected exactly one spell OP_RETURN output');
  const it = instructions(outs[0]!.script);
  it.next();
  it.next();
  let payload: Uint8Array | undefined;
  try {
    const third = it.next();
    if (!third.done && third.value.push !== undefined) payload = third.value.push;
  } catch {
    /* falls through */
  }
  if (!payload) throw noSpell('expected spell data payload in OP_RETURN');
  let more: boolean;
  try {
    more = !it.next().done;
  } catch {
    more = true; // an unparseable instruction is still "more"
  }
  if (more) throw noSpell('unexpected additional data in OP_RETURN');
  return Uint8Array.from(payload);
}

/** rust-bitcoin's `Witness::taproot_control_block` / `taproot_leaf_script` (annex-aware). */
function taprootScriptPath(witness: Uint8Array[]): { script: Uint8Array; control: Uint8Array } | undefined {
  let items = witness;
  if (items.length >= 2 && items[items.length - 1]![0] === 0x50) items = items.slice(0, -1); // annex
  if (items.length < 2) return undefined;
  return { control: items[items.length - 1]!, script: items[items.length - 2]! };
}

/** The envelope payload in the last input's Taproot leaf script. */
export function witnessSpellPayload(tx: BitcoinTx): Uint8Array {
  const last: TxIn | undefined = tx.inputs[tx.inputs.length - 1];
  if (!last) throw noSpell('transaction does not have inputs');
  const path = taprootScriptPath(last.witness);
  if (!path) throw noSpell('no control block');
  if (path.control.length !== 33)
    throw noSpell('the Taproot tree contains more than one leaf: only a single script is supported');
  const it = instructions(path.script);
  const step = () => {
    try {
      const r = it.next();
      return r.done ? undefined : r.value;
    } catch {
      return null; // parse error
    }
  };
  const a = step();
  if (!a || a.push === undefined || a.push.length !== 0) throw noSpell('expected OP_FALSE');
  const b = step();
  if (!b || b.op !== OP_IF) throw noSpell('expected OP_IF');
  const c = step();
  if (!c || c.push === undefined) throw noSpell('no spell data');
  if (!equalBytes(c.push, SPELL_MARKER)) throw noSpell('no spell marker');
  const chunks: Uint8Array[] = [];
  for (;;) {
    const x = step();
    if (x && x.push !== undefined) chunks.push(x.push);
    else if (x && x.op === OP_ENDIF) break;
    else throw noSpell('unexpected opcode');
  }
  return concatBytes(...chunks);
}

/** The OP_RETURN output script carrying a spell payload. */
export const opReturnSpellScript = (payload: Uint8Array): Uint8Array =>
  concatBytes(Uint8Array.of(OP_RETURN), pushData(SPELL_MARKER), pushData(payload));
