/**
 * The Helm chart's files/: copies of the kustomize sources the templates render
 * (deploy/base, deploy/components, deploy/overlays/cert-manager), so the chart holds no
 * symbolic link (Helm warns of each and packages their targets; Windows clones break
 * them) and deploy/ stays the one place to edit.
 */
import type { GeneratedFile } from './index.js';
import { listRepoFiles, readRepoFile } from './lib/files.js';

const CHART_FILES_DIR = 'deploy/helm/spiderpool-iaas-webhook/files';

/** Each directory of deploy/ the chart reads, and its name under files/. */
const CHART_COPIES = [
  { from: 'deploy/base', to: 'base' },
  { from: 'deploy/components', to: 'components' },
  { from: 'deploy/overlays/cert-manager', to: 'cert-manager' },
] as const;

const README = `# Generated: do not edit

Copies of deploy/base, deploy/components and deploy/overlays/cert-manager, made by
\`npm run generate\` (scripts/generate/chart-files.ts). Edit deploy/ and run it again.
`;

export default function generate(): GeneratedFile[] {
  const copies = CHART_COPIES.flatMap(({ from, to }) =>
    listRepoFiles(from).map((file) => ({ path: `${CHART_FILES_DIR}/${to}${file.slice(from.length)}`, text: readRepoFile(file) ?? '' })),
  );
  return [...copies, { path: `${CHART_FILES_DIR}/README.md`, text: README }];
}
