/**
 * Bitcoin script instructions as rust-bitcoin 0.32's non-minimal `Script::instructions()` reads
 * them (pushes and opcodes), a minimal-push builder, and rust-bitcoin's opcode names (used to
 * reproduce the reference's error texts). Browser-safe.
 */
import { CharmsError } from '../errors.js';
import { concatBytes, toHex } from '../util/bytes.js';

const OP_PUSHDATA1 = 0x4c;
const OP_PUSHDATA2 = 0x4d;
const OP_PUSHDATA4 = 0x4e;
export const OP_IF = 0x63;
export const OP_ENDIF = 0x68;
export const OP_RETURN = 0x6a;

/**
 * One instruction. `push` is set for every data push (`OP_0`, `OP_PUSHBYTES_1..75`,
 * `OP_PUSHDATA1/2/4`, what rust-bitcoin calls `Instruction::PushBytes`); `op` is the opcode byte.
 */
export type Instruction = { op: number; push?: Uint8Array };

/** rust-bitcoin `script::Error::EarlyEndOfScript`: a push runs past the end of the script. */
const EARLY_END_OF_SCRIPT = 'EarlyEndOfScript';

const earlyEnd = (at: number) => new CharmsError('INVALID_TX', `script: push at byte ${at} runs past the end of the script`, { cause: EARLY_END_OF_SCRIPT });

/**
 * Lazy instruction iterator, as rust-bitcoin's `Script::instructions()`: yields instructions
 * until one fails to parse, then throws (INVALID_TX) at that point; earlier ones stay usable.
 * Non-minimal pushes are accepted.
 */
export function* instructions(script: Uint8Array): Generator<Instruction> {
  let i = 0;
  while (i < script.length) {
    const start = i;
    const op = script[i++]!;
    let len = -1;
    if (op <= 75) len = op;
    else if (op === OP_PUSHDATA1 || op === OP_PUSHDATA2 || op === OP_PUSHDATA4) {
      const width = op === OP_PUSHDATA1 ? 1 : op === OP_PUSHDATA2 ? 2 : 4;
      if (i + width > script.length) throw earlyEnd(start);
      len = 0;
      for (let k = width - 1; k >= 0; k--) len = len * 256 + script[i + k]!;
      i += width;
    }
    if (len < 0) {
      yield { op };
      continue;
    }
    if (len > script.length - i) throw earlyEnd(start);
    yield { op, push: script.subarray(i, i + len) };
    i += len;
  }
}

/** Parses all instructions; throws (INVALID_TX) on a truncated push. */
export const parseScript = (script: Uint8Array): Instruction[] => [...instructions(script)];

/** The shortest push of `data` (rust-bitcoin `Builder::push_slice`; no OP_n for small numbers). */
export function pushData(data: Uint8Array): Uint8Array {
  const n = data.length;
  let head: number[];
  if (n <= 75) head = [n];
  else if (n <= 0xff) head = [OP_PUSHDATA1, n];
  else if (n <= 0xffff) head = [OP_PUSHDATA2, n & 0xff, n >> 8];
  else if (n <= 0xffffffff) head = [OP_PUSHDATA4, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24];
  else throw new CharmsError('INVALID_INPUT', `script push: ${n} bytes exceed the 4 GiB push limit`);
  return concatBytes(Uint8Array.from(head), data);
}

/** Builds a script from opcodes (numbers) and data pushes (byte strings, pushed minimally). */
export const buildScript = (parts: (number | Uint8Array)[]): Uint8Array =>
  concatBytes(...parts.map((p) => (typeof p === 'number' ? Uint8Array.of(p) : pushData(p))));

// Names of the non-push opcodes 0x61..0xba, in order (rust-bitcoin `opcodes::all`).
const NAMED_OPS =
  'NOP VER IF NOTIF VERIF VERNOTIF ELSE ENDIF VERIFY RETURN TOALTSTACK FROMALTSTACK 2DROP 2DUP 3DUP 2OVER ' +
  '2ROT 2SWAP IFDUP DEPTH DROP DUP NIP OVER PICK ROLL ROT SWAP TUCK CAT SUBSTR LEFT RIGHT SIZE INVERT AND OR ' +
  'XOR EQUAL EQUALVERIFY RESERVED1 RESERVED2 1ADD 1SUB 2MUL 2DIV NEGATE ABS NOT 0NOTEQUAL ADD SUB MUL DIV MOD ' +
  'LSHIFT RSHIFT BOOLAND BOOLOR NUMEQUAL NUMEQUALVERIFY NUMNOTEQUAL LESSTHAN GREATERTHAN LESSTHANOREQUAL ' +
  'GREATERTHANOREQUAL MIN MAX WITHIN RIPEMD160 SHA1 SHA256 HASH160 HASH256 CODESEPARATOR CHECKSIG ' +
  'CHECKSIGVERIFY CHECKMULTISIG CHECKMULTISIGVERIFY NOP1 CLTV CSV NOP4 NOP5 NOP6 NOP7 NOP8 NOP9 NOP10 CHECKSIGADD';
const NAMED = NAMED_OPS.split(' ');

/** rust-bitcoin's name of an opcode byte (`OP_PUSHBYTES_5`, `OP_IF`, `OP_RETURN_187`, …). */
export function opcodeName(op: number): string {
  if (op <= 75) return `OP_PUSHBYTES_${op}`;
  if (op === OP_PUSHDATA1) return 'OP_PUSHDATA1';
  if (op === OP_PUSHDATA2) return 'OP_PUSHDATA2';
  if (op === OP_PUSHDATA4) return 'OP_PUSHDATA4';
  if (op === 0x4f) return 'OP_PUSHNUM_NEG1';
  if (op === 0x50) return 'OP_RESERVED';
  if (op <= 0x60) return `OP_PUSHNUM_${op - 0x50}`;
  if (op <= 0xba) return `OP_${NAMED[op - 0x61]!}`;
  if (op <= 0xfe) return `OP_RETURN_${op}`;
  return 'OP_INVALIDOPCODE';
}

/** Bitcoin Core's `GetOpName` for a non-push opcode (`OP_CHECKLOCKTIMEVERIFY`, `1` for OP_1, …). */
function coreOpName(op: number): string {
  if (op === 0x4f) return '-1';
  if (op === 0x50) return 'OP_RESERVED';
  if (op <= 0x60) return String(op - 0x50);
  if (op === 0xb1) return 'OP_CHECKLOCKTIMEVERIFY';
  if (op === 0xb2) return 'OP_CHECKSEQUENCEVERIFY';
  if (op <= 0xba) return `OP_${NAMED[op - 0x61]!}`;
  if (op === 0xff) return 'OP_INVALIDOPCODE';
  return 'OP_UNKNOWN';
}

/** A push of at most 4 bytes as Core's `CScriptNum(vch, false).getint()`: little-endian, sign bit on top. */
function scriptNum(b: Uint8Array): number {
  if (b.length === 0) return 0;
  let n = 0;
  for (let i = b.length - 1; i >= 0; i--) n = n * 256 + b[i]!;
  const top = 0x80 * 256 ** (b.length - 1);
  return b[b.length - 1]! & 0x80 ? -(n - top) : n;
}

/**
 * A script as Bitcoin Core's `ScriptToAsmStr(script, false)` writes it (`scriptPubKey.asm` of
 * `getrawtransaction … 1`): opcodes by name, pushes of up to 4 bytes as numbers, longer ones as
 * hex, and `[error]` where a push runs past the end.
 */
export function scriptAsm(script: Uint8Array): string {
  const parts: string[] = [];
  try {
    for (const ins of instructions(script)) {
      if (ins.push === undefined) parts.push(coreOpName(ins.op));
      else if (ins.push.length <= 4) parts.push(String(scriptNum(ins.push)));
      else parts.push(toHex(ins.push));
    }
  } catch {
    parts.push('[error]');
  }
  return parts.join(' ');
}
