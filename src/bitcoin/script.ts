/** Bitcoin script instructions: a parser (pushes and opcodes) and a minimal-push builder. */
import { CharmsError } from '../errors.js';
import { concatBytes } from '../util/bytes.js';

export const OP_0 = 0x00;
export const OP_PUSHDATA1 = 0x4c;
export const OP_PUSHDATA2 = 0x4d;
export const OP_PUSHDATA4 = 0x4e;
export const OP_IF = 0x63;
export const OP_ENDIF = 0x68;
export const OP_RETURN = 0x6a;

export type Instruction = { op: number; push?: Uint8Array };

/** Parses all instructions; throws on a push running past the end (rust-bitcoin: EarlyEndOfScript). */
export const parseScript = (script: Uint8Array): Instruction[] => [...instructions(script)];

/** The shortest push of `data` (as rust-bitcoin's `push_slice`). */
export function pushData(data: Uint8Array): Uint8Array {
  const n = data.length;
  let head: number[];
  if (n <= 75) head = [n];
  else if (n <= 0xff) head = [OP_PUSHDATA1, n];
  else if (n <= 0xffff) head = [OP_PUSHDATA2, n & 0xff, n >> 8];
  else head = [OP_PUSHDATA4, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24];
  return concatBytes(Uint8Array.from(head), data);
}

/**
 * Lazy instruction iterator, as rust-bitcoin's `Script::instructions()`: yields instructions
 * until one fails to parse, then throws at that point (earlier instructions stay usable).
 */
export function* instructions(script: Uint8Array): Generator<Instruction> {
  let i = 0;
  const end = () => new CharmsError('INVALID_TX', 'script: unexpected end of script');
  while (i < script.length) {
    const op = script[i++]!;
    let len = -1;
    if (op >= 1 && op <= 75) len = op;
    else if (op === OP_PUSHDATA1) {
      if (i + 1 > script.length) throw end();
      len = script[i]!;
      i += 1;
    } else if (op === OP_PUSHDATA2) {
      if (i + 2 > script.length) throw end();
      len = script[i]! | (script[i + 1]! << 8);
      i += 2;
    } else if (op === OP_PUSHDATA4) {
      if (i + 4 > script.length) throw end();
      len = (script[i]! | (script[i + 1]! << 8) | (script[i + 2]! << 16) | (script[i + 3]! << 24)) >>> 0;
      i += 4;
    }
    if (len >= 0) {
      if (i + len > script.length) throw end();
      yield { op, push: script.subarray(i, i + len) };
      i += len;
    } else if (op === OP_0) yield { op, push: new Uint8Array(0) };
    else yield { op };
  }
}
