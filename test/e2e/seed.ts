/**
 * The seed of a differential test's generated inputs: `$<variable>` when set (to replay a
 * run); under CI (`CI=true`), one derived from the commit being tested, so that a rerun of
 * the same commit replays the same inputs and a commit's CI inputs can be run before it
 * lands; otherwise a new one every run. Every test prints the seed it used.
 */
import { execFileSync } from 'node:child_process';

export function differentialSeed(variable: string): number {
  const set = process.env[variable];
  if (set !== undefined && set !== '') return Number(set);
  if (process.env['CI'] === 'true') {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    return parseInt(commit.slice(0, 8), 16) % 2 ** 31;
  }
  return Date.now() % 2 ** 31;
}
