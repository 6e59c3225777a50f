/**
 * What a command prints on stdout, as a value (ord's `Output`): a command returns one and `main`
 * renders it, so the bytes of each format (serde_json compact or pretty, serde_yaml, plain lines,
 * raw bytes) are written in one place and no command builds JSON by hand. Progress and notices
 * are not output: commands write them on stderr as they happen.
 */
import { CharmsError } from '../errors.js';
import { toJsonCompact, toJsonPretty } from '../codec/json.js';
import { toYaml } from '../codec/yaml.js';
import { type Value, ValueMap } from '../codec/value.js';

type Body =
  /** serde_json `to_string` (compact) or `to_string_pretty`; a newline after it unless said otherwise. */
  | { readonly kind: 'json'; readonly value: Value; readonly pretty: boolean; readonly newline: boolean }
  /** serde_yaml `to_string`. */
  | { readonly kind: 'yaml'; readonly value: Value }
  /** A stream of documents: YAML, each after a `---` line and followed by an empty line, or pretty JSON one after another. */
  | { readonly kind: 'documents'; readonly values: readonly Value[]; readonly format: 'yaml' | 'json' }
  /** Plain text lines (a path, a hex key), each ended by a newline. */
  | { readonly kind: 'lines'; readonly lines: readonly string[] }
  /** Text printed as it is (a generated script). */
  | { readonly kind: 'text'; readonly text: string }
  /** Raw bytes (a CBOR payload). */
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array };

/** A command's output and the exit code that goes with it (default 0; failures throw instead). */
export type Output = Body & { readonly exitCode?: number };

export const json = (value: Value, o: { pretty?: boolean; newline?: boolean } = {}): Output => ({
  kind: 'json',
  value,
  pretty: o.pretty ?? false,
  newline: o.newline ?? true,
});
export const yaml = (value: Value): Output => ({ kind: 'yaml', value });
export const documents = (values: readonly Value[], format: 'yaml' | 'json'): Output => ({ kind: 'documents', values, format });
export const lines = (...ls: string[]): Output => ({ kind: 'lines', lines: ls });
export const text = (t: string): Output => ({ kind: 'text', text: t });
export const bytes = (b: Uint8Array): Output => ({ kind: 'bytes', bytes: b });
export const withExitCode = (o: Output, exitCode: number): Output => ({ ...o, exitCode });

/** The bytes `main` writes on stdout for an output. */
export function renderOutput(o: Output): string | Uint8Array {
  switch (o.kind) {
    case 'json':
      return (o.pretty ? toJsonPretty : toJsonCompact)(o.value) + (o.newline ? '\n' : '');
    case 'yaml':
      return toYaml(o.value);
    case 'documents':
      return o.values.map((v) => (o.format === 'yaml' ? `---\n${toYaml(v)}\n` : `${toJsonPretty(v)}\n`)).join('');
    case 'lines':
      return o.lines.map((l) => `${l}\n`).join('');
    case 'text':
      return o.text;
    case 'bytes':
      return o.bytes;
  }
}

/**
 * Plain JSON-shaped data (objects, arrays, strings, booleans, safe integers, null) as a `Value`,
 * keys in the object's order, so it prints through the same serde_json printers as everything else.
 */
export function valueOfPlain(x: unknown): Value {
  if (x === null || typeof x === 'string' || typeof x === 'boolean') return x;
  if (typeof x === 'number') {
    if (!Number.isSafeInteger(x)) throw new CharmsError('INTERNAL', `cannot print ${x}: only integers are plain output data`);
    return BigInt(x);
  }
  if (Array.isArray(x)) return x.map(valueOfPlain);
  if (typeof x === 'object')
    return new ValueMap(
      Object.entries(x)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, valueOfPlain(v)]),
    );
  throw new CharmsError('INTERNAL', `cannot print a ${typeof x} as output data`);
}
