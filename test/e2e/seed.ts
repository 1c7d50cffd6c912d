/**
 * The seed of a differential test's generated inputs: `$<variable>` when set (to replay a
 * run; anything but a non-negative integer is an error); under CI (`CI=true`) in a git work
 * tree, one derived from the commit being tested, so that a rerun of the same commit
 * replays the same inputs and a commit's CI inputs can be run before it lands; otherwise a
 * new one every run. Every test prints the seed it used.
 */
import { execFileSync } from 'node:child_process';

export function differentialSeed(variable: string): number {
  const set = process.env[variable];
  if (set !== undefined && set !== '') {
    if (!/^\d+$/.test(set)) throw new Error(`${variable}=${set}: a seed is a non-negative integer, as the tests print it`);
    return Number(set) % 2 ** 31;
  }
  const commit = process.env['CI'] === 'true' ? headCommit() : undefined;
  return commit !== undefined ? parseInt(commit.slice(0, 8), 16) % 2 ** 31 : Date.now() % 2 ** 31;
}

/** The checked-out commit, or `undefined` outside a git work tree (a copy without `.git`). */
function headCommit(): string | undefined {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return /^[0-9a-f]{40,64}$/.test(commit) ? commit : undefined;
  } catch {
    return undefined;
  }
}
