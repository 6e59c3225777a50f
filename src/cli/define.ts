/**
 * Declarative command definitions. The argument parser, `--help` texts and shell completions
 * are all generated from these, so they cannot drift apart.
 */
export interface OptionDef {
  /** Long name without dashes, e.g. `change-address`. */
  name: string;
  short?: string;
  aliases?: string[];
  /** Placeholder for the value; absent for boolean flags. */
  value?: string;
  repeatable?: boolean;
  /** Values accepted (for help and completions). */
  choices?: string[];
  /** The Rust type clap parses the value as: a bad value is a usage error (exit 2), as clap's. */
  type?: 'u16' | 'f64' | 'ip';
  required?: boolean;
  /** Another option (long name) that must be given with this one (clap's `requires`). */
  requires?: string;
  default?: string;
  help: string;
  hidden?: boolean;
}

interface ArgDef {
  name: string;
  required?: boolean;
  variadic?: boolean;
  choices?: string[];
  help: string;
}

export interface ParsedArgs {
  /** Option values by long name: string, string[] (repeatable) or true (flags). */
  opts: Record<string, string | string[] | boolean | undefined>;
  args: string[];
}

export interface CliContext {
  /** true in the `charms-prover` build (local proving, server). */
  prover: boolean;
  stdout: (s: string | Uint8Array) => void;
  stderr: (s: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  readStdin: () => Promise<Uint8Array>;
}

export interface CommandDef {
  name: string;
  about: string;
  long?: string;
  /** Text printed after the options in `--help` (clap's `after_long_help`). */
  afterHelp?: string;
  hidden?: boolean;
  options?: OptionDef[];
  args?: ArgDef[];
  subcommands?: CommandDef[];
  /** Returns the process exit code (default 0). */
  run?: (a: ParsedArgs, ctx: CliContext) => Promise<number | void>;
}
