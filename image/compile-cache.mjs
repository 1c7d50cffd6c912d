/**
 * Fills Node's compile cache with V8's code for every module of the webhook: each file
 * under APP_DIR/dist (the CLI's entry, dist/cli/main.js, run with --version) and all they
 * import from node_modules. Run at image build time as the webhook's uid, and by `npm run
 * bench -- --scale`; why and how it is shipped: docs/adr/0022-compile-cache.md.
 *
 * Usage: NODE_COMPILE_CACHE=DIR node image/compile-cache.mjs APP_DIR
 * Exit 2 when NODE_COMPILE_CACHE is unset or Node keeps no cache (before Node 22.1).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import module from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const app = process.argv[2];
if (app === undefined || process.env.NODE_COMPILE_CACHE === undefined || module.getCompileCacheDir?.() === undefined) {
  process.stderr.write('usage: NODE_COMPILE_CACHE=DIR node image/compile-cache.mjs APP_DIR (Node 22.1 or later)\n');
  process.exit(2);
}
const dist = join(app, 'dist');
const entry = join('cli', 'main.js');
const modules = readdirSync(dist, { recursive: true }).filter((f) => f.endsWith('.js') && f !== entry);
for (const file of modules) await import(pathToFileURL(join(dist, file)).href);
execFileSync(process.execPath, [...process.execArgv, join(dist, entry), '--version'], { stdio: 'ignore' });
process.stdout.write(`compile cache: ${modules.length + 1} modules of ${dist} and their imports in ${module.getCompileCacheDir()}\n`);
