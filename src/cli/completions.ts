/**
 * Shell completion scripts generated from the command definitions (the same tree the parser
 * uses), for bash, zsh, fish, powershell and elvish.
 */
import type { CommandDef, OptionDef } from './define.js';

export const SHELLS = ['bash', 'zsh', 'fish', 'powershell', 'elvish'] as const;
export type Shell = (typeof SHELLS)[number];

interface Node {
  path: string[];
  cmd: CommandDef;
}

function walk(cmd: CommandDef, path: string[] = []): Node[] {
  const here = { path: [...path, cmd.name], cmd };
  return [here, ...(cmd.subcommands ?? []).filter((s) => !s.hidden).flatMap((s) => walk(s, here.path))];
}

const visibleSubs = (c: CommandDef) => (c.subcommands ?? []).filter((s) => !s.hidden);
const visibleOpts = (c: CommandDef) => (c.options ?? []).filter((o) => !o.hidden);
const flags = (o: OptionDef): string[] => [`--${o.name}`, ...(o.aliases ?? []).map((a) => `--${a}`), ...(o.short ? [`-${o.short}`] : [])];
const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function bash(root: CommandDef): string {
  const bin = root.name;
  const fn = `_${bin.replace(/[^a-zA-Z0-9]/g, '_')}`;
  const nodes = walk(root);
  const cases = nodes
    .map((n) => {
      const key = n.path.join('__');
      const words = [...visibleSubs(n.cmd).map((s) => s.name), ...visibleOpts(n.cmd).flatMap(flags), '--help'];
      const valued = visibleOpts(n.cmd).filter((o) => o.value);
      const optCases = valued
        .map((o) => {
          const compl = o.choices ? `COMPREPLY=( $(compgen -W ${sq(o.choices.join(' '))} -- "$cur") )` : 'COMPREPLY=( $(compgen -f -- "$cur") )';
          return `            ${flags(o).join('|')}) ${compl}; return 0 ;;`;
        })
        .join('\n');
      return `        ${key})\n          case "$prev" in\n${optCases}\n          esac\n          COMPREPLY=( $(compgen -W ${sq(words.join(' '))} -- "$cur") ); return 0 ;;`;
    })
    .join('\n');
  const subsMap = nodes
    .flatMap((n) => visibleSubs(n.cmd).map((s) => `        ${n.path.join('__')},${s.name}) cmd="${n.path.join('__')}__${s.name}" ;;`))
    .join('\n');
  return `# bash completion for ${bin}
${fn}() {
    local cur prev cmd i
    cur="\${COMP_WORDS[COMP_CWORD]}"
    prev="\${COMP_WORDS[COMP_CWORD-1]}"
    cmd="${bin}"
    for (( i=1; i<COMP_CWORD; i++ )); do
      case "$cmd,\${COMP_WORDS[i]}" in
${subsMap}
      esac
    done
    case "$cmd" in
${cases}
    esac
}
complete -F ${fn} -o bashdefault -o default ${bin}
`;
}

function zsh(root: CommandDef): string {
  const bin = root.name;
  const nodes = walk(root);
  const esc = (s: string) => s.replace(/[[\]:']/g, (c) => `\\${c}`);
  const funcs = nodes
    .map((n) => {
      const name = `_${n.path.join('__').replace(/-/g, '_')}`;
      const specs = visibleOpts(n.cmd).map((o) => {
        const names = flags(o);
        const val = o.value ? `:${o.value}:${o.choices ? `(${o.choices.join(' ')})` : '_files'}` : '';
        const rep = o.repeatable ? '*' : '';
        return names.map((f) => `'${rep}${f}[${esc(o.help)}]${val}'`).join(' \\\n    ');
      });
      const subs = visibleSubs(n.cmd);
      let body = `  _arguments -s \\\n    ${[...specs, `'(-h --help)'{-h,--help}'[Print help]'`].join(' \\\n    ')}`;
      if (subs.length) {
        const list = subs.map((s) => `'${s.name}:${esc(s.about)}'`).join(' ');
        body = `  local -a subcmds
  subcmds=(${list})
  _arguments -C '(-h --help)'{-h,--help}'[Print help]' '1: :->cmd' '*:: :->args'
  case $state in
    cmd) _describe -t commands '${n.path.join(' ')} command' subcmds ;;
    args)
      case $words[1] in
${subs.map((s) => `        ${s.name}) _${[...n.path, s.name].join('__').replace(/-/g, '_')} ;;`).join('\n')}
      esac ;;
  esac`;
      } else if (n.cmd.args?.length) {
        body += ` \\\n    ${n.cmd.args.map((a, i) => `'${a.variadic ? '*' : i + 1}:${a.name}:${a.choices ? `(${a.choices.join(' ')})` : '_files'}'`).join(' ')}`;
      }
      return `${name}() {\n${body}\n}`;
    })
    .join('\n\n');
  return `#compdef ${bin}\n\n${funcs}\n\nif [ "$funcstack[1]" = "_${bin.replace(/-/g, '_')}" ]; then\n  _${bin.replace(/-/g, '_')} "$@"\nelse\n  compdef _${bin.replace(/-/g, '_')} ${bin}\nfi\n`;
}

function fish(root: CommandDef): string {
  const bin = root.name;
  const lines: string[] = [`# fish completion for ${bin}`];
  for (const n of walk(root)) {
    const chain = n.path.slice(1);
    const cond =
      chain.length === 0
        ? `__fish_use_subcommand`
        : `__fish_seen_subcommand_from ${chain[chain.length - 1]}` +
          (visibleSubs(n.cmd).length
            ? `; and not __fish_seen_subcommand_from ${visibleSubs(n.cmd)
                .map((s) => s.name)
                .join(' ')}`
            : '');
    for (const s of visibleSubs(n.cmd)) lines.push(`complete -c ${bin} -n ${sq(cond)} -f -a ${s.name} -d ${sq(s.about)}`);
    for (const o of visibleOpts(n.cmd)) {
      let l = `complete -c ${bin} -n ${sq(cond)} -l ${o.name}`;
      if (o.short) l += ` -s ${o.short}`;
      if (o.value) l += o.choices ? ` -r -f -a ${sq(o.choices.join(' '))}` : ' -r -F';
      lines.push(`${l} -d ${sq(o.help)}`);
      for (const al of o.aliases ?? []) lines.push(`complete -c ${bin} -n ${sq(cond)} -l ${al}${o.value ? ' -r' : ''} -d ${sq(o.help)}`);
    }
    for (const a of n.cmd.args ?? []) if (a.choices) lines.push(`complete -c ${bin} -n ${sq(cond)} -f -a ${sq(a.choices.join(' '))}`);
  }
  return lines.join('\n') + '\n';
}

function powershell(root: CommandDef): string {
  const bin = root.name;
  const cases = walk(root)
    .map((n) => {
      const items = [
        ...visibleSubs(n.cmd).map(
          (s) => `[CompletionResult]::new('${s.name}', '${s.name}', [CompletionResultType]::ParameterValue, '${s.about.replace(/'/g, "''")}')`,
        ),
        ...visibleOpts(n.cmd).flatMap((o) =>
          flags(o).map((f) => `[CompletionResult]::new('${f}', '${f}', [CompletionResultType]::ParameterName, '${o.help.replace(/'/g, "''")}')`),
        ),
      ];
      return `        '${n.path.join(';')}' {\n            ${items.join('\n            ')}\n            break\n        }`;
    })
    .join('\n');
  return `using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName '${bin}' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $commandElements = $commandAst.CommandElements
    $command = @(
        '${bin}'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
            }
            $element.Value
        }) -join ';'
    $completions = @(switch ($command) {
${cases}
    })
    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } | Sort-Object -Property ListItemText
}
`;
}

function elvish(root: CommandDef): string {
  const bin = root.name;
  const cases = walk(root)
    .map((n) => {
      const items = [
        ...visibleSubs(n.cmd).map((s) => `            cand ${s.name} '${s.about.replace(/'/g, "''")}'`),
        ...visibleOpts(n.cmd).flatMap((o) => flags(o).map((f) => `            cand ${f} '${o.help.replace(/'/g, "''")}'`)),
      ];
      return `        &'${n.path.join(';')}'= {\n${items.join('\n')}\n        }`;
    })
    .join('\n');
  return `use builtin;
use str;

set edit:completion:arg-completer[${bin}] = {|@words|
    fn spaces {|n| builtin:repeat $n ' ' | str:join '' }
    fn cand {|text desc| edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc }
    var command = '${bin}'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') { break }
        set command = $command';'$word
    }
    var completions = [
${cases}
    ]
    $completions[$command]
}
`;
}

export function completionScript(shell: Shell, root: CommandDef): string {
  switch (shell) {
    case 'bash':
      return bash(root);
    case 'zsh':
      return zsh(root);
    case 'fish':
      return fish(root);
    case 'powershell':
      return powershell(root);
    case 'elvish':
      return elvish(root);
  }
}
