// @ts-check
/**
 * The image's SBOM, CycloneDX 1.5 JSON, from its mounted root filesystem: what is in the
 * image, as syft would list it (docs/adr/0020-release-pipeline.md says why not syft).
 *
 *   node scripts/release/sbom.mjs ROOTFS IMAGE_REF NODE_VERSION > sbom.cdx.json
 *
 * Components: every Debian package of ROOTFS/var/lib/dpkg/status (pkg:deb purls), every
 * package.json under ROOTFS/app/node_modules (pkg:npm purls, their license), and Node
 * itself (pkg:generic/node). Prints the npm package count to stderr. Exit 2 with one line
 * on wrong arguments or an unreadable root filesystem.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';

/** Debian's status file, each installed package as `{ name, version, arch }`. */
function debianPackages(status) {
  return status
    .split(/\n\n+/)
    .map((stanza) => Object.fromEntries(stanza.split('\n').filter((l) => /^[A-Za-z-]+: /.test(l)).map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)])))
    .filter((f) => f['Package'] && f['Status']?.endsWith(' installed'))
    .map((f) => ({ name: f['Package'], version: f['Version'], arch: f['Architecture'] }));
}

/** Every package.json one level under each node_modules (scoped ones two), nested trees too; at most 5 000. */
function npmPackages(nodeModules) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.') || found.length >= 5000) continue;
      const pkgDir = path.join(dir, entry.name);
      if (entry.name.startsWith('@')) { walk(pkgDir); continue; }
      const pkg = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
      found.push({ name: pkg.name, version: pkg.version, license: typeof pkg.license === 'string' ? pkg.license : undefined });
      const nested = path.join(pkgDir, 'node_modules');
      if (readdirSync(pkgDir).includes('node_modules')) walk(nested);
    }
  };
  walk(nodeModules);
  return found;
}

const npmPurl = (name, version) => `pkg:npm/${name.replace('@', '%40')}@${version}`;

function main([rootfs, imageRef, nodeVersion]) {
  if (!rootfs || !imageRef || !nodeVersion) {
    console.error('usage: node scripts/release/sbom.mjs ROOTFS IMAGE_REF NODE_VERSION (a mounted image, its repository@digest, its Node version)');
    process.exit(2);
  }
  let debs, npms;
  try {
    debs = debianPackages(readFileSync(path.join(rootfs, 'var/lib/dpkg/status'), 'utf8'));
    npms = npmPackages(path.join(rootfs, 'app/node_modules'));
  } catch (e) {
    console.error(`sbom: cannot read the image's packages under ${rootfs}: ${e instanceof Error ? e.message : e}`);
    process.exit(2);
  }
  const [repository, digest] = imageRef.split('@');
  const components = [
    { type: 'platform', name: 'node', version: nodeVersion, purl: `pkg:generic/node@${nodeVersion}` },
    ...debs.map((d) => ({ type: 'library', name: d.name, version: d.version, purl: `pkg:deb/debian/${d.name}@${encodeURIComponent(d.version)}?arch=${d.arch}` })),
    ...npms.map((p) => ({ type: 'library', name: p.name, version: p.version, purl: npmPurl(p.name, p.version), ...(p.license ? { licenses: [{ expression: p.license }] } : {}) })),
  ].map((c) => ({ 'bom-ref': c.purl, ...c }));
  const image = { type: 'container', name: repository, version: digest, 'bom-ref': imageRef };
  const bom = { bomFormat: 'CycloneDX', specVersion: '1.5', serialNumber: `urn:uuid:${randomUUID()}`, version: 1, metadata: { timestamp: new Date().toISOString(), component: image }, components };
  process.stdout.write(`${JSON.stringify(bom, null, 1)}\n`);
  console.error(`sbom: ${debs.length} Debian packages, ${npms.length} npm packages, node ${nodeVersion}`);
}

main(process.argv.slice(2));
