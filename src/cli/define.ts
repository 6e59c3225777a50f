/**
 * Declarative command definitions. The argument parser, `--help` texts and shell completions
 * are all generated from these, so they cannot drift apart; and each command's handler sees its
 * options typed from the same definition (`Args`), so it cannot read an option it did not declare.
 */
import type { Output } from './output.js';

export interface OptionDef {
  /** Long name without dashes, e.g. `change-address`. */
  readonly name: string;
  readonly short?: string;
  readonly aliases?: readonly string[];
  /** Placeholder for the value; absent for boolean flags. */
  readonly value?: string;
  readonly repeatable?: boolean;
  /** Values accepted (for help and completions). */
  readonly choices?: readonly string[];
  /** The Rust type clap parses the value as: a bad value is a usage error (exit 2), as clap's. */
  readonly type?: 'u16' | 'f64' | 'ip';
  readonly required?: boolean;
  /** Another option (long name) that must be given with this one (clap's `requires`). */
  readonly requires?: string;
  readonly default?: string;
  readonly help: string;
  readonly hidden?: boolean;
}

export interface ArgDef {
  readonly name: string;
  readonly required?: boolean;
  readonly variadic?: boolean;
  readonly choices?: readonly string[];
  readonly help: string;
}

/** One option's or argument's value type: its choices when it lists them, else any string. */
type ValueOf<D> = D extends { readonly choices: readonly (infer C extends string)[] } ? C : string;

/**
 * What the parser gives a command for one option: a flag is a boolean; a repeatable option a list;
 * an option with a default or that is required always has its value; any other may be absent.
 */
type OptionValue<O extends OptionDef> = O extends { readonly value: string }
  ? O extends { readonly repeatable: true }
    ? ValueOf<O>[]
    : O extends { readonly default: string } | { readonly required: true }
      ? ValueOf<O>
      : ValueOf<O> | undefined
  : boolean;

type ArgValue<A extends ArgDef> = A extends { readonly variadic: true }
  ? ValueOf<A>[]
  : A extends { readonly required: true }
    ? ValueOf<A>
    : ValueOf<A> | undefined;

/** A command's options by long name, typed from its option table (declared `as const`). */
export type Options<T extends readonly OptionDef[]> = { readonly [O in T[number] as O['name']]: OptionValue<O> };
/** A command's positional arguments by name, typed from its argument table. */
type Positionals<T extends readonly ArgDef[]> = { readonly [A in T[number] as A['name']]: ArgValue<A> };

/** What a command's handler receives: its own options and arguments, and nothing else. */
interface Args<O extends readonly OptionDef[] = readonly [], A extends readonly ArgDef[] = readonly []> {
  readonly opts: Options<O>;
  readonly args: Positionals<A>;
}

/** The parser's untyped result: option values by long name, positionals in order. */
export interface ParsedArgs {
  /** string, string[] (repeatable), or boolean (flags: false when not given). */
  opts: Record<string, string | string[] | boolean | undefined>;
  args: string[];
}

/** What a command sees of the process. No stdout: a command returns its `Output` and main prints it. */
export interface CliContext {
  /** true in the `charms-prover` build (local proving, server). */
  prover: boolean;
  /** Progress and notices (stdout is for the command's output only). */
  stderr: (s: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  readStdin: () => Promise<Uint8Array>;
}

/**
 * A command's handler: returns what it prints on stdout (nothing for servers, which run until a
 * signal, and for commands that only report on stderr); throws `CharmsError` on failure.
 */
export type Run<O extends readonly OptionDef[] = readonly [], A extends readonly ArgDef[] = readonly []> = (
  a: Args<O, A>,
  ctx: CliContext,
) => Promise<Output | void>;

/** A node of the command tree, as the parser, help and completions walk it (options untyped). */
export interface CommandDef {
  readonly name: string;
  readonly about: string;
  readonly long?: string;
  /** Text printed after the options in `--help` (clap's `after_long_help`). */
  readonly afterHelp?: string;
  readonly hidden?: boolean;
  readonly options?: readonly OptionDef[];
  readonly args?: readonly ArgDef[];
  readonly subcommands?: readonly CommandDef[];
  readonly run?: (a: ParsedArgs, ctx: CliContext) => Promise<Output | void>;
}

interface CommandSpec<O extends readonly OptionDef[], A extends readonly ArgDef[]> extends Omit<CommandDef, 'options' | 'args' | 'run' | 'subcommands'> {
  readonly options?: O;
  readonly args?: A;
  /** Typed by `options` and `args` alone: a handler written for other options does not fit. */
  readonly run: NoInfer<Run<O, A>>;
}

/**
 * A leaf command whose handler is typed by its own option and argument tables. The parser fills
 * every declared option (defaults, `false` for absent flags) and checks required ones and choices,
 * which is what makes the handler's typed view of the untyped parse result true.
 */
export function defineCommand<const O extends readonly OptionDef[] = readonly [], const A extends readonly ArgDef[] = readonly []>(
  spec: CommandSpec<O, A>,
): CommandDef {
  const { run, ...def } = spec;
  return {
    ...def,
    run: (p, ctx) => {
      const args = Object.fromEntries((spec.args ?? []).map((d, i) => [d.name, d.variadic ? p.args.slice(i) : p.args[i]]));
      return run({ opts: p.opts, args } as unknown as Args<O, A>, ctx);
    },
  };
}
