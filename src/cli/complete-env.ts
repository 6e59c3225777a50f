/**
 * Dynamic shell completions over clap_complete's `CompleteEnv` protocol (clap_complete 4.6
 * `env/mod.rs`, `env/shells.rs`), which the reference's docs tell users to set up:
 * `source <(COMPLETE=bash charms)` in ~/.bashrc (also zsh, fish, elvish, powershell).
 *
 * - `COMPLETE=<shell> charms` (no further arguments): print the shell's registration script. The
 *   script calls the completer back as `COMPLETE=<shell> <completer> -- <words…>`, with the index
 *   of the word under the cursor in `_CLAP_COMPLETE_INDEX` (bash, zsh, elvish; fish and
 *   powershell complete the last word) and the separator in `_CLAP_IFS`.
 * - `COMPLETE=<shell> charms -- <words…>`: print the candidates for that word in the shell's
 *   format (bash, elvish: values joined by `_CLAP_IFS`; zsh: `value:help` joined by `_CLAP_IFS`;
 *   fish, powershell: `value<TAB>help` lines).
 *
 * Candidates come from the same command tree as the parser (clap_complete's engine rules): after
 * an option that takes a value, its possible values (or paths for file options); otherwise the
 * subcommands and positional values that match, then options (`--long` when the word starts so,
 * every option when it is empty or `-`), `--opt=` values.
 */
import { readdirSync, statSync, accessSync, constants } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CommandDef, OptionDef } from './define.js';

const COMPLETE_SHELLS = ['bash', 'elvish', 'fish', 'powershell', 'zsh'] as const;
type CompleteShell = (typeof COMPLETE_SHELLS)[number];

interface Candidate {
  value: string;
  help?: string;
}

/** The auto-generated flags clap adds: `-h/--help` everywhere, `-V/--version` on the root. */
export const helpOption: OptionDef = { name: 'help', short: 'h', help: 'Print help' };
export const versionOption: OptionDef = { name: 'version', short: 'V', help: 'Print version' };
export const helpSubcommand = { name: 'help', about: 'Print this message or the help of the given subcommand(s)' };

const visibleOpts = (cmd: CommandDef, root: boolean): OptionDef[] => [
  ...(cmd.options ?? []).filter((o) => !o.hidden),
  helpOption,
  ...(root ? [versionOption] : []),
];

/** Option values that are paths (clap's PathBuf fields get path completion). */
const PATH_VALUES = new Set(['FILE', 'WASM', 'PATH', 'DIR']);

function pathCandidates(prefix: string, cwd: string): Candidate[] {
  const slash = prefix.lastIndexOf('/');
  const dir = slash >= 0 ? prefix.slice(0, slash + 1) : '';
  const base = prefix.slice(slash + 1);
  let names: string[];
  try {
    names = readdirSync(resolve(cwd, dir || '.'));
  } catch {
    return [];
  }
  const out: Candidate[] = [];
  for (const n of names.sort()) {
    if (!n.startsWith(base) || (n.startsWith('.') && !base.startsWith('.'))) continue;
    let isDir = false;
    try {
      isDir = statSync(join(resolve(cwd, dir || '.'), n)).isDirectory();
    } catch {
      // a dangling link: offered as a file
    }
    out.push({ value: `${dir}${n}${isDir ? '/' : ''}` });
  }
  return out;
}

function valueCandidates(o: OptionDef, prefix: string, cwd: string): Candidate[] {
  if (o.choices) return o.choices.filter((c) => c.startsWith(prefix)).map((value) => ({ value }));
  if (o.value && PATH_VALUES.has(o.value)) return pathCandidates(prefix, cwd);
  return [];
}

/** The candidates for `words[index]` (`words[0]` is the program name), as clap_complete's engine. */
function completeWords(root: CommandDef, words: string[], index: number, cwd: string): Candidate[] {
  let cmd = root;
  let pos = 0;
  let escaped = false;
  let pending: OptionDef | undefined;
  const findLong = (c: CommandDef, name: string) =>
    visibleOpts(c, c === root).find((o) => o.name === name) ?? c.options?.find((o) => o.aliases?.includes(name));
  const findShort = (c: CommandDef, s: string) => visibleOpts(c, c === root).find((o) => o.short === s);
  for (let i = 1; i < index && i < words.length; i++) {
    const w = words[i]!;
    if (pending) {
      pending = undefined;
      continue;
    }
    const sub = escaped ? undefined : cmd.subcommands?.find((s) => s.name === w);
    if (sub) {
      cmd = sub;
      pos = 0;
    } else if (escaped) pos++;
    else if (w === '--') escaped = true;
    else if (w.startsWith('--')) {
      const o = findLong(cmd, w.slice(2).split('=')[0]!);
      if (o?.value && !w.includes('=')) pending = o;
    } else if (w.startsWith('-') && w.length > 1) {
      const o = findShort(cmd, w[1]!);
      if (o?.value && w.length === 2) pending = o;
    } else pos++;
  }
  const cur = words[index] ?? '';
  if (pending) return valueCandidates(pending, cur, cwd);
  const out: Candidate[] = [];
  if (!cur.startsWith('-') || escaped) {
    const subs = (cmd.subcommands ?? []).filter((s) => !s.hidden).map((s) => ({ value: s.name, help: s.about }));
    if (cmd.subcommands) subs.push({ value: helpSubcommand.name, help: helpSubcommand.about });
    out.push(...subs.filter((s) => s.value.startsWith(cur)).sort((a, b) => (a.value < b.value ? -1 : 1)));
    const arg = cmd.args?.[Math.min(pos, (cmd.args?.length ?? 1) - 1)];
    if (arg?.choices && (pos < (cmd.args?.length ?? 0) || arg.variadic)) out.push(...arg.choices.filter((c) => c.startsWith(cur)).map((value) => ({ value })));
  }
  if (escaped) return out;
  const opts = visibleOpts(cmd, cmd === root);
  const longs = (prefix: string) => opts.flatMap((o) => [`--${o.name}`].filter((f) => f.startsWith(prefix)).map((value) => ({ value, help: o.help })));
  const shorts = (prefix: string) => opts.filter((o) => o.short).map((o) => ({ value: `${prefix}${o.short}`, help: o.help }));
  if (cur === '') out.push(...longs('--'), ...shorts('-'));
  else if (cur === '-') out.push(...shorts('-'), ...longs('--'));
  else if (cur.startsWith('--')) {
    const eq = cur.indexOf('=');
    if (eq < 0) out.push(...longs(cur));
    else {
      const o = findLong(cmd, cur.slice(2, eq));
      if (o?.value) out.push(...valueCandidates(o, cur.slice(eq + 1), cwd).map((c) => ({ ...c, value: `${cur.slice(0, eq + 1)}${c.value}` })));
    }
  } else if (cur.startsWith('-')) {
    const o = findShort(cmd, cur[1]!);
    if (o?.value) {
      const sep = cur[2] === '=' ? '=' : '';
      out.push(...valueCandidates(o, cur.slice(2 + sep.length), cwd).map((c) => ({ ...c, value: `-${o.short}${sep}${c.value}` })));
    }
  }
  return out;
}

const shQuote = (s: string): string => (/^[A-Za-z0-9_\-./=:@,+]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

function fishQuote(s: string): string {
  if (/^[A-Za-z0-9_\-./=:@,+]+$/.test(s)) return s;
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The shell's registration script; `completer` is the command (words) that runs this program. */
function registrationScript(shell: CompleteShell, bin: string, completer: string[], varName = 'COMPLETE'): string {
  const fn = bin.replace(/[^A-Za-z0-9_]/g, '_');
  const call = completer.map(shQuote).join(' ');
  switch (shell) {
    case 'bash':
      return `
_clap_complete_${fn}() {
    local IFS=$'\\013'
    local _CLAP_COMPLETE_INDEX=\${COMP_CWORD}
    local _CLAP_COMPLETE_COMP_TYPE=\${COMP_TYPE}
    if compopt +o nospace 2> /dev/null; then
        local _CLAP_COMPLETE_SPACE=false
    else
        local _CLAP_COMPLETE_SPACE=true
    fi
    local words=("\${COMP_WORDS[@]}")
    if [[ "\${BASH_VERSINFO[0]}" -ge 4 ]]; then
        words[COMP_CWORD]="$2"
    fi
    COMPREPLY=( $( \\
        _CLAP_IFS="$IFS" \\
        _CLAP_COMPLETE_INDEX="$_CLAP_COMPLETE_INDEX" \\
        _CLAP_COMPLETE_COMP_TYPE="$_CLAP_COMPLETE_COMP_TYPE" \\
        _CLAP_COMPLETE_SPACE="$_CLAP_COMPLETE_SPACE" \\
        ${varName}="bash" \\
        ${call} -- "\${words[@]}" \\
    ) )
    if [[ $? != 0 ]]; then
        unset COMPREPLY
    elif [[ $_CLAP_COMPLETE_SPACE == false ]] && [[ "\${COMPREPLY-}" =~ [=/:]$ ]]; then
        compopt -o nospace
    fi
}
if [[ "\${BASH_VERSINFO[0]}" -eq 4 && "\${BASH_VERSINFO[1]}" -ge 4 || "\${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -o nospace -o bashdefault -o nosort -F _clap_complete_${fn} ${shQuote(bin)}
else
    complete -o nospace -o bashdefault -F _clap_complete_${fn} ${shQuote(bin)}
fi
`;
    case 'zsh':
      return `#compdef ${shQuote(bin)}
function _clap_dynamic_completer_${fn}() {
    local _CLAP_COMPLETE_INDEX=$(expr $CURRENT - 1)
    local _CLAP_IFS=$'\\n'

    local completions=("\${(@f)$( \\
        _CLAP_IFS="$_CLAP_IFS" \\
        _CLAP_COMPLETE_INDEX="$_CLAP_COMPLETE_INDEX" \\
        ${varName}="zsh" \\
        ${call} -- "\${words[@]}" 2>/dev/null \\
    )}")

    if [[ -n $completions ]]; then
        local -a dirs=()
        local -a other=()
        local completion
        for completion in $completions; do
            local value="\${completion%%:*}"
            if [[ "$value" == */ ]]; then
                local dir_no_slash="\${value%/}"
                if [[ "$completion" == *:* ]]; then
                    dirs+=("$dir_no_slash:\${completion#*:}")
                else
                    dirs+=("$dir_no_slash")
                fi
            else
                other+=("$completion")
            fi
        done
        [[ -n $dirs ]] && _describe -V 'values' dirs -S '/' -r '/'
        [[ -n $other ]] && _describe -V 'values' other
    fi
}

compdef _clap_dynamic_completer_${fn} ${shQuote(bin)}
`;
    case 'fish':
      return `complete --keep-order --exclusive --command ${fishQuote(bin)} --arguments "(${varName}=fish ${completer.map((w) => fishQuote(w).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\$/g, '\\$')).join(' ')} -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"\n`;
    case 'elvish':
      return `
set edit:completion:arg-completer[${shQuote(bin)}] = { |@words|
    var index = (count $words)
    set index = (- $index 1)

    put (env _CLAP_IFS="\\n" _CLAP_COMPLETE_INDEX=(to-string $index) ${varName}="elvish" ${call} -- $@words) | to-lines
}
`;
    case 'powershell':
      return `
Register-ArgumentCompleter -Native -CommandName ${shQuote(bin)} -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $prev = $env:${varName};
    $env:${varName} = "powershell";

    $args = $commandAst.Extent.Text
    $args = $args.Substring(0, [math]::Min($cursorPosition, $args.Length));
    if ($wordToComplete -eq "") {
        $args += " ''";
    }

    $results = Invoke-Expression @"
& ${call} -- $args
"@;
    if ($null -eq $prev) {
        Remove-Item Env:\\${varName};
    } else {
        $env:${varName} = $prev;
    }
    $results | ForEach-Object {
        $split = $_.Split("\`t");
        $cmd = $split[0];

        if ($split.Length -eq 2) {
            $help = $split[1];
        }
        else {
            $help = $split[0];
        }

        [System.Management.Automation.CompletionResult]::new($cmd, $cmd, 'ParameterValue', $help)
    }
};
`;
  }
}

/** The candidates printed in the shell's format. */
function completionOutput(shell: CompleteShell, root: CommandDef, words: string[], env: NodeJS.ProcessEnv, cwd: string): string {
  const envIndex = Number.parseInt(env._CLAP_COMPLETE_INDEX ?? '', 10);
  const ifs = env._CLAP_IFS ?? '\n';
  const firstLine = (s?: string) => (s ?? '').split('\n')[0]!;
  if (shell === 'fish' || shell === 'powershell') {
    const cands = completeWords(root, words, words.length - 1, cwd);
    return cands.map((c) => (c.help ? `${c.value}\t${firstLine(c.help)}` : c.value) + '\n').join('');
  }
  const index = Number.isFinite(envIndex) && envIndex >= 0 ? envIndex : 0;
  if (shell === 'zsh') {
    const w = words.length === index ? [...words, ''] : words;
    return completeWords(root, w, index, cwd)
      .map((c) => c.value.replace(/\\/g, '\\\\').replace(/:/g, '\\:') + (c.help ? `:${firstLine(c.help).replace(/\\/g, '\\\\')}` : ''))
      .join(ifs);
  }
  return completeWords(root, words, index, cwd)
    .map((c) => c.value)
    .join(ifs);
}

/** Whether `path` can be run directly (a script with its shebang and the executable bit). */
function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Handles `COMPLETE=<shell>` (clap's `CompleteEnv::complete`): returns the text to print, or
 * undefined when the variable is unset, empty or `0` (then the program runs as usual). Throws for
 * an unknown shell.
 */
export function completeEnv(root: CommandDef, argv: string[], env: NodeJS.ProcessEnv, cwd: string, self: { script: string; node: string }): string | undefined {
  const name = env.COMPLETE;
  if (name === undefined || name === '' || name === '0') return undefined;
  const stem = name.replace(/^.*\//, '').replace(/\.[^.]*$/, '');
  const shell = (stem === 'powershell_ise' ? 'powershell' : stem) as CompleteShell;
  if (!COMPLETE_SHELLS.includes(shell)) throw new Error(`unknown shell \`${stem}\`, expected one of ${COMPLETE_SHELLS.map((s) => `\`${s}\``).join(', ')}`);
  const dashes = argv.indexOf('--');
  const words = dashes >= 0 ? argv.slice(dashes + 1) : [];
  if (words.length === 0) {
    const script = resolve(cwd, self.script);
    return registrationScript(shell, root.name, executable(script) ? [script] : [self.node, script]);
  }
  return completionOutput(shell, root, words, env, cwd);
}
