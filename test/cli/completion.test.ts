/** `completion bash|zsh`: the script completes commands and each command's flags (run in bash itself). */
import { spawnSync } from 'node:child_process';
import { completionScript, type CompletedCommand } from '../../src/cli/completion.js';

const COMMANDS: CompletedCommand[] = [
  {
    name: 'review',
    description: 'judge manifests as the API server would; exit 0 allowed',
    flags: ['-f', '--filename', '--cluster', '--context', '-o', '--output'],
  },
  { name: 'audit', description: "judge every stored IaaS pool (--pools, else the cluster's)", flags: ['--pools', '--context'] },
];

/** What bash completes for the words typed, through the generated function (bounded: 10 s). */
function bashCompletes(words: string[]): string[] {
  const script = `${completionScript('bash', COMMANDS)}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _spiderpool_iaas_webhook; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 10_000 });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter(Boolean);
}

describe('completion', () => {
  it('bash completes command names, then the flags of the command typed', () => {
    expect(bashCompletes(['spiderpool-iaas-webhook', 'rev'])).toEqual(['review']);
    expect(bashCompletes(['spiderpool-iaas-webhook', 'review', '--c'])).toEqual(['--cluster', '--context']);
    expect(bashCompletes(['spiderpool-iaas-webhook', 'audit', '--'])).toEqual(['--pools', '--context']);
  });

  it('zsh: a #compdef script describing each command in one clause, without the colons and quotes _describe splits on', () => {
    const script = completionScript('zsh', COMMANDS);
    expect(script.startsWith('#compdef spiderpool-iaas-webhook\n')).toBe(true);
    expect(script).toContain("    'review:judge manifests as the API server would'\n");
    expect(script).toContain("    'audit:judge every stored IaaS pool'\n");
    expect(script).toContain('    review) flags=(-f --filename --cluster --context -o --output) ;;\n');
  });
});
