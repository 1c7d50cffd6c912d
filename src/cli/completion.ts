/**
 * `completion bash|zsh`: a script completing the commands and each one's flags, made from
 * the command line's own definition (so a new flag completes without anyone editing this),
 * loaded as kubectl's is: `source <(spiderpool-iaas-webhook completion bash)`.
 */
export const SHELLS = ['bash', 'zsh'] as const;
export type Shell = (typeof SHELLS)[number];

/** A command as completion offers it: its name, a short description, and its flags. */
export interface CompletedCommand {
  name: string;
  description: string;
  flags: string[];
}

const PROGRAM = 'spiderpool-iaas-webhook';
const FUNCTION = '_spiderpool_iaas_webhook';

/** The completion script for `shell`. */
export function completionScript(shell: Shell, commands: readonly CompletedCommand[]): string {
  return shell === 'bash' ? bashScript(commands) : zshScript(commands);
}

function bashScript(commands: readonly CompletedCommand[]): string {
  const cases = commands.map((c) => `    ${c.name}) flags="${c.flags.join(' ')}" ;;`).join('\n');
  return `# bash completion for ${PROGRAM}; load it with: source <(${PROGRAM} completion bash)
${FUNCTION}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" flags=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${commands.map((c) => c.name).join(' ')}" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$flags" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
}
complete -o default -F ${FUNCTION} ${PROGRAM}
`;
}

/** A description as zsh's `_describe` reads it: one clause, without `:` or quotes. */
function zshDescription(text: string): string {
  return text
    .split(/[;(]/, 1)[0]!
    .trim()
    .replace(/[:'\\]/g, ' ');
}

function zshScript(commands: readonly CompletedCommand[]): string {
  const described = commands.map((c) => `    '${c.name}:${zshDescription(c.description)}'`).join('\n');
  const cases = commands.map((c) => `    ${c.name}) flags=(${c.flags.join(' ')}) ;;`).join('\n');
  return `#compdef ${PROGRAM}
# zsh completion for ${PROGRAM}; load it with: source <(${PROGRAM} completion zsh)
${FUNCTION}() {
  local -a commands flags
  commands=(
${described}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  case $words[2] in
${cases}
  esac
  if [[ $PREFIX == -* ]]; then compadd -a flags; else _files; fi
}
compdef ${FUNCTION} ${PROGRAM}
`;
}
