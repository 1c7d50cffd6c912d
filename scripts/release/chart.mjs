// @ts-check
/**
 * Writes a release's facts into a COPY of the chart (scripts/release/release.sh; never the
 * checkout's chart):
 *
 *   node scripts/release/chart.mjs CHART_DIR IMAGE_REPOSITORY IMAGE_DIGEST VERSION
 *
 * values.yaml: image.repository and image.digest, so the chart installs the image by digest
 * (templates/_helpers.tpl, sw.image). Chart.yaml: version and appVersion, and Artifact Hub's
 * artifacthub.io/images (the image by digest) and artifacthub.io/prerelease (a version with a
 * `-` part, as semver says). Comments are kept. Exit 2 with one line on wrong arguments.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseDocument, stringify } from 'yaml';

/** Sets each [keyPath, value] in the YAML file `file`, keeping its comments. */
function edit(file, settings) {
  const doc = parseDocument(readFileSync(file, 'utf8'));
  for (const [keyPath, value] of settings) doc.setIn(keyPath, value);
  writeFileSync(file, doc.toString());
}

const [chartDir, repository, digest, version] = process.argv.slice(2);
if (!chartDir || !repository || !/^sha256:[0-9a-f]{64}$/.test(digest ?? '') || !version) {
  console.error('usage: node scripts/release/chart.mjs CHART_DIR IMAGE_REPOSITORY sha256:<64 hex> VERSION');
  process.exit(2);
}
const image = `${repository}@${digest}`;
edit(path.join(chartDir, 'values.yaml'), [[['image', 'repository'], repository], [['image', 'tag'], version], [['image', 'digest'], digest]]);
edit(path.join(chartDir, 'Chart.yaml'), [
  [['version'], version],
  [['appVersion'], version],
  [['annotations', 'artifacthub.io/images'], stringify([{ name: 'spiderpool-iaas-webhook', image }])],
  [['annotations', 'artifacthub.io/prerelease'], String(version.includes('-'))],
]);
console.error(`chart: ${path.basename(chartDir)} ${version} installs ${image}`);
