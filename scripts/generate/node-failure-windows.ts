/**
 * The windows table of docs/node-failure.md, between its two marker lines, from
 * src/cluster/node-failure-windows.ts and deploy/base/deployment.yaml; the rest of the page
 * is written by hand.
 */
import { DEPLOYMENT_FILE, type NodeFailureWindows, nodeFailureWindows, type StatedWindow } from '../../src/cluster/node-failure-windows.js';
import { REFUSING_WEBHOOK_TIMEOUT_SECONDS } from '../../src/defaults.js';
import type { GeneratedFile } from './index.js';
import { readRepoFile } from './lib/files.js';

const PAGE = 'docs/node-failure.md';
const BEGIN = '<!-- the windows: written by `npm run generate` (scripts/generate/node-failure-windows.ts) -->';
const END = '<!-- end of the windows -->';

/** Each window's heading row, in the table's order. */
const HEADINGS: Record<keyof NodeFailureWindows, string> = {
  deadReplica: 'The node of one replica of several dies: calls fail only when sent within',
  crowdedNode: 'The node of every replica dies: calls fail only when sent within',
  falseMark: 'A live replica marked by a peer (a false alarm) is not ready for at most',
};

const rows = (heading: string, window: StatedWindow) => [
  `| **${heading}** | | **${window.seconds}** |`,
  ...window.parts.map((p) => `| ${p.what} | ${p.source} | ${p.seconds} |`),
];

/** The table and the lines under it. */
function windowsText(windows: NodeFailureWindows): string {
  const keys = Object.keys(HEADINGS) as (keyof NodeFailureWindows)[];
  return [
    '| window, then its parts | source | s |',
    '|---|---|--:|',
    ...keys.flatMap((key) => rows(HEADINGS[key], windows[key])),
    '',
    `\`PEER_*\`: src/cluster/replica-defaults.ts; \`--node-monitor-*\`: kube-controller-manager. Each failed call is`,
    `refused \`timeoutSeconds\` (${REFUSING_WEBHOOK_TIMEOUT_SECONDS} s) after it was sent. API calls are taken as answered at once.`,
    '',
  ].join('\n');
}

export default function generate(): GeneratedFile[] {
  const page = readRepoFile(PAGE);
  const deployment = readRepoFile(DEPLOYMENT_FILE);
  if (page === undefined || deployment === undefined) throw new Error(`${PAGE} and ${DEPLOYMENT_FILE} must exist`);
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${PAGE} needs the line ${BEGIN} before the windows and ${END} after them`);
  const text = `${page.slice(0, start + BEGIN.length)}\n${windowsText(nodeFailureWindows(deployment, DEPLOYMENT_FILE))}${page.slice(end)}`;
  return [{ path: PAGE, text }];
}
