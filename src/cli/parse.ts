import { isIP } from 'node:net';
import { CharmsError } from '../errors.js';
import type { CommandDef, OptionDef, ParsedArgs } from './define.js';
import { helpOption, helpSubcommand, versionOption } from './complete-env.js';

export interface Resolved {
  path: CommandDef[];
  parsed: ParsedArgs;
  help: boolean;
  version: boolean;
  /** A command that needs a subcommand got none (clap: help on stderr, exit 2). */
  missingSubcommand?: boolean;
}

const usage = (msg: string): CharmsError => new CharmsError('INVALID_INPUT', msg);

function findOption(cmd: CommandDef, name: string): OptionDef | undefined {
  return cmd.options?.find((o) => o.name === name || o.aliases?.includes(name));
}

const optUsage = (o: OptionDef): string => `--${o.name}${o.value ? ` <${o.value}>` : ''}`;

/** Rust's `f64::from_str` grammar (decimal, exponent, inf, infinity, nan; an optional sign). */
const F64 = /^[+-]?(inf|infinity|nan|(\d+\.?\d*|\.\d+)(e[+-]?\d+)?)$/i;

/** Checks a value as clap's value parser for the option's Rust type would. */
function checkType(o: OptionDef, val: string): void {
  const bad = (why: string) => usage(`invalid value '${val}' for '${optUsage(o)}': ${why}`);
  switch (o.type) {
    case 'f64':
      if (!F64.test(val)) throw bad('invalid float literal');
      return;
    case 'u16':
      if (val === '') throw bad('cannot parse integer from empty string');
      if (!/^\+?\d+$/.test(val)) throw bad('invalid digit found in string');
      if (BigInt(val) > 65535n) throw bad(`${val} is not in 0..=65535`);
      return;
    case 'ip':
      if (isIP(val) === 0) throw bad('invalid IP address syntax');
      return;
  }
}

/** Walks subcommands, then parses options and positionals of the leaf command. */
export function parseArgv(root: CommandDef, argv: string[]): Resolved {
  const path: CommandDef[] = [root];
  let i = 0;
  let help = false;
  let version = false;
  // descend into subcommands (global flags --help/--version allowed anywhere before)
  while (i < argv.length) {
    const cur = path[path.length - 1]!;
    const a = argv[i]!;
    if (a === '-h' || a === '--help') {
      help = true;
      i++;
      continue;
    }
    if (a === '-V' || a === '--version') {
      version = true;
      i++;
      continue;
    }
    if (a === 'help' && cur.subcommands) {
      help = true;
      i++;
      continue;
    }
    if (!cur.subcommands || a.startsWith('-')) break;
    const sub = cur.subcommands.find((c) => c.name === a);
    if (!sub) throw usage(`unrecognized subcommand '${a}' for '${path.map((c) => c.name).join(' ')}'`);
    path.push(sub);
    i++;
  }
  const cmd = path[path.length - 1]!;
  const parsed: ParsedArgs = { opts: {}, args: [] };
  if (cmd.subcommands && !cmd.run) {
    if (i < argv.length && !help && !version) throw usage(`unexpected argument '${argv[i]}'`);
    return { path, parsed, help: true, version, missingSubcommand: !help && !version };
  }
  let onlyPositional = false;
  for (; i < argv.length; i++) {
    const a = argv[i]!;
    if (!onlyPositional && a === '--') {
      onlyPositional = true;
      continue;
    }
    if (!onlyPositional && (a === '-h' || a === '--help')) {
      help = true;
      continue;
    }
    if (!onlyPositional && a.startsWith('-') && a.length > 1) {
      let name: string;
      let inline: string | undefined;
      let opt: OptionDef | undefined;
      if (a.startsWith('--')) {
        const eq = a.indexOf('=');
        name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
        inline = eq >= 0 ? a.slice(eq + 1) : undefined;
        opt = findOption(cmd, name);
      } else {
        name = a.slice(1, 2);
        // `-oVALUE` and `-o=VALUE`, as clap
        inline = a.length > 2 ? a.slice(a[2] === '=' ? 3 : 2) : undefined;
        opt = cmd.options?.find((o) => o.short === name);
      }
      if (!opt) throw usage(`unexpected argument '${a}' for '${path.map((c) => c.name).join(' ')}' (see --help)`);
      if (!opt.value) {
        if (inline !== undefined) throw usage(`--${opt.name} takes no value`);
        parsed.opts[opt.name] = true;
        continue;
      }
      let val = inline;
      if (val === undefined) {
        if (i + 1 >= argv.length) throw usage(`a value is required for '--${opt.name} <${opt.value}>'`);
        val = argv[++i]!;
      }
      if (opt.choices && !opt.choices.includes(val)) throw usage(`invalid value '${val}' for '--${opt.name}': possible values: ${opt.choices.join(', ')}`);
      checkType(opt, val);
      if (opt.repeatable) {
        const prev = parsed.opts[opt.name];
        const list = Array.isArray(prev) ? prev : [];
        list.push(val);
        // `--app-bins a b c` style: keep taking values until the next option
        while (i + 1 < argv.length && !argv[i + 1]!.startsWith('-')) list.push(argv[++i]!);
        parsed.opts[opt.name] = list;
      } else {
        if (parsed.opts[opt.name] !== undefined) throw usage(`'--${opt.name}' cannot be used multiple times`);
        parsed.opts[opt.name] = val;
      }
      continue;
    }
    parsed.args.push(a);
  }
  if (help || version) return { path, parsed, help, version };
  const defs = cmd.args ?? [];
  const variadic = defs.some((d) => d.variadic);
  if (!variadic && parsed.args.length > defs.length) throw usage(`unexpected argument '${parsed.args[defs.length]}'`);
  defs.forEach((d, idx) => {
    if (d.required && parsed.args[idx] === undefined) throw usage(`the required argument <${d.name}> was not provided`);
    const val = parsed.args[idx];
    if (val !== undefined && d.choices && !d.choices.includes(val))
      throw usage(`invalid value '${val}' for <${d.name}>: possible values: ${d.choices.join(', ')}`);
  });
  for (const o of cmd.options ?? [])
    if (o.requires && parsed.opts[o.name] !== undefined && parsed.opts[o.requires] === undefined)
      throw usage(`the argument '--${o.name}${o.value ? ` <${o.value}>` : ''}' requires '--${o.requires}'`);
  // every declared option gets its value (what the handler's typed view, define.ts `Options`, promises)
  for (const o of cmd.options ?? []) {
    if (parsed.opts[o.name] === undefined && o.default !== undefined && o.value) parsed.opts[o.name] = o.default;
    if (o.required && parsed.opts[o.name] === undefined) throw usage(`the required option '--${o.name} <${o.value}>' was not provided`);
    if (o.repeatable && parsed.opts[o.name] === undefined) parsed.opts[o.name] = [];
    if (!o.value && parsed.opts[o.name] === undefined) parsed.opts[o.name] = false;
  }
  return { path, parsed, help, version };
}

export function helpText(path: CommandDef[]): string {
  const cmd = path[path.length - 1]!;
  const full = path.map((c) => c.name).join(' ');
  const lines: string[] = [cmd.long ?? cmd.about, ''];
  const opts = (cmd.options ?? []).filter((o) => !o.hidden);
  // clap's usage line: [OPTIONS] for the optional ones, then each required option, then positionals
  const required = opts.filter((o) => o.required).map(optUsage);
  const argsUsage = (cmd.args ?? []).map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`) + (a.variadic ? '...' : ''));
  const usageParts = [full, ...(opts.some((o) => !o.required) ? ['[OPTIONS]'] : []), ...required, ...(cmd.subcommands ? ['<COMMAND>'] : []), ...argsUsage];
  lines.push(`Usage: ${usageParts.join(' ')}`);
  const subs = (cmd.subcommands ?? []).filter((s) => !s.hidden);
  if (subs.length) {
    lines.push('', 'Commands:');
    const all = [...subs, helpSubcommand];
    const w = Math.max(...all.map((s) => s.name.length));
    for (const s of all) lines.push(`  ${s.name.padEnd(w)}  ${s.about}`);
  }
  if (cmd.args?.length) {
    lines.push('', 'Arguments:');
    for (const a of cmd.args)
      lines.push(`  ${(a.required ? `<${a.name}>` : `[${a.name}]`).padEnd(20)}  ${a.help}${a.choices ? ` [possible values: ${a.choices.join(', ')}]` : ''}`);
  }
  lines.push('', 'Options:');
  const fmt = (o: OptionDef) => `${o.short ? `-${o.short}, ` : '    '}${optUsage(o)}`;
  const shown = [...opts, helpOption, ...(path.length === 1 ? [versionOption] : [])];
  const w = Math.max(14, ...shown.map((o) => fmt(o).length));
  for (const o of shown) {
    let h = o.help;
    if (o.aliases?.length) h += ` [aliases: ${o.aliases.map((a) => '--' + a).join(', ')}]`;
    if (o.default !== undefined) h += ` [default: ${o.default}]`;
    if (o.choices) h += ` [possible values: ${o.choices.join(', ')}]`;
    lines.push(`  ${fmt(o).padEnd(w)}  ${h}`);
  }
  if (cmd.afterHelp) lines.push('', cmd.afterHelp.trimEnd());
  return lines.join('\n') + '\n';
}
