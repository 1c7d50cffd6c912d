/**
 * The built server's log is written asynchronously, and nothing logged is lost when it
 * stops: reviews are sent while the reader of its stdout is stalled (the pipe fills and
 * log lines wait in the server), then SIGTERM; every review's line must come out before
 * the process exits.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WEBHOOKS } from '../../src/defaults.js';
import { loadReview } from '../fixtures/load.js';
import { httpsRequest } from '../helpers/client.js';
import { until } from '../helpers/until.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(root, 'dist/cli/main.js');
/** Enough lines (~400 bytes each) to fill a 64 KiB pipe several times over. */
const REVIEWS = 600;

let workDir: string;

beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'webhook-log-'));
});

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

it('at --log-level=debug logs every review, allowed or denied, and loses no line at SIGTERM', async () => {
  const certDir = path.join(workDir, 'certs');
  const server = spawn(process.execPath, [cli, 'serve', '--host=127.0.0.1', '--port=0', `--cert-dir=${certDir}`, '--no-pool-cache', '--log-level=debug'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  let out = '';
  server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  try {
    await until(() => out.includes('"msg":"serving admission reviews over HTTPS"') || server.exitCode !== null, 'the server to listen');
    expect(server.exitCode).toBeNull();
    const port = Number(/"port":(\d+)/.exec(out)![1]);
    server.stdout!.pause(); // from now on the server's writes to stdout back up
    const ca = await readFile(path.join(certDir, 'ca.crt'), 'utf8');

    const agent = new https.Agent({ keepAlive: true, maxSockets: 8 });
    const uids = Array.from({ length: REVIEWS }, (_, i) => `log-test-${i}`);
    const answers = await Promise.all(
      uids.map((uid, i) => {
        const review = loadReview(i % 2 === 0 ? 'pool-update-node-to-other-node' : 'pool-update-node-to-global');
        review.request.uid = uid;
        return httpsRequest({ port, ca, path: WEBHOOKS.spiderIPPool.path, body: JSON.stringify(review), agent });
      }),
    );
    agent.destroy();
    expect(answers.map((a) => a.status)).toEqual(uids.map(() => 200));

    server.kill('SIGTERM');
    server.stdout!.resume();
    await expect(exited).resolves.toBe(0);
  } finally {
    if (server.exitCode === null) server.kill('SIGKILL');
  }

  const lines = out
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const reviews = lines.filter((line) => line['msg'] === 'admission review');
  expect(reviews.map((line) => line['uid']).sort()).toEqual(Array.from({ length: REVIEWS }, (_, i) => `log-test-${i}`).sort());
  expect(reviews.filter((line) => line['allowed'] === true).every((line) => line['level'] === 20)).toBe(true);
  expect(reviews.filter((line) => line['allowed'] === false).every((line) => line['level'] === 30)).toBe(true);
  expect(lines.at(-1)).toMatchObject({ msg: 'stopped' });
});
