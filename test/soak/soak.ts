/**
 * `npm run soak [-- --duration 2m]`: two instances of the built server (`dist/`) on
 * 127.0.0.1 behind a round-robin client, mixed load (every fixture review and some malformed
 * requests, each answer checked against the in-process reviewer), a certificate rotation
 * (Secret-style `..data` swap) every `--rotate-every`, and one instance restarted halfway
 * (taken out of rotation, SIGTERM, started again, back in once `/readyz` passes), as a
 * rolling update does. Reports requests served and failed, latency percentiles and each
 * instance's peak RSS; exits 1 when any request failed or a rotation or restart went wrong.
 * Bounded: it stops by itself, and kills what it started.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createReviewer } from '../../src/rules/registry.js';
import { WEBHOOKS } from '../../src/defaults.js';
import { formatGoDuration } from '../../src/go/duration-format.js';
import { parseGoDuration } from '../../src/go/duration-parse.js';
import type { CertificateBundle } from '../../src/certs/generate.js';
import { secretFiles, servingCertificate, writeSecretDir } from '../certs/secret-dir.js';
import { httpsRequest, servedFingerprint } from '../helpers/client.js';
import { until } from '../helpers/until.js';

/** The repository root: this file runs from build/soak/test/soak/. */
const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../..');
const cli = join(root, 'dist/cli/main.js');

const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10m' },
    'rotate-every': { type: 'string', default: '1m' },
    concurrency: { type: 'string', default: '8' },
  },
});
const ms = (text: string) => Number(parseGoDuration(text) / 1_000_000n);
const durationMs = ms(args.duration);
const rotateEveryMs = Math.min(ms(args['rotate-every']), Math.max(5_000, durationMs / 4));
const concurrency = Number(args.concurrency);

// --- the mix -----------------------------------------------------------------------------

interface Case {
  path: string;
  body: string;
  /** What a correct answer is: the HTTP status, and for 200 the decision. */
  status: number;
  allowed?: boolean;
}

const review = createReviewer();
const fixtureDir = join(root, 'test/fixtures/reviews');
const cases: Case[] = readdirSync(fixtureDir).map((file) => {
  const body = readFileSync(join(fixtureDir, file), 'utf8');
  const kind = JSON.parse(body).request.kind.kind;
  const path = kind === 'ConfigMap' ? WEBHOOKS.configMap.path : WEBHOOKS.spiderIPPool.path;
  return { path, body, status: 200, allowed: review(JSON.parse(body)).review.response.allowed };
});
// Malformed requests, one in ten.
const malformed: Case[] = [
  { path: WEBHOOKS.spiderIPPool.path, body: '{"apiVersion":', status: 400 },
  { path: WEBHOOKS.configMap.path, body: '{"kind":"AdmissionReview"}', status: 400 },
];
const pick = (i: number): Case => (i % 10 === 9 ? malformed[i % malformed.length]! : cases[i % cases.length]!);

// --- instances -----------------------------------------------------------------------------

interface Instance {
  name: string;
  proc: ChildProcess;
  port: number;
  agent: https.Agent;
  /** Certificate serial numbers this instance logged as newly served. */
  reloaded: string[];
  peakRssKb: number;
  exitCode?: number | null;
}

let certDir: string;
let ca: string;
/** Every server started, so that even a failed run leaves none behind. */
const children: ChildProcess[] = [];
process.on('exit', () => children.forEach((child) => child.exitCode === null && child.kill('SIGKILL')));
const peakRssKb: Record<string, number> = {};

async function startInstance(name: string): Promise<Instance> {
  const proc = spawn(process.execPath, [cli, 'serve', `--cert-dir=${certDir}`, '--no-generate-certs', '--port=0', '--host=127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(proc);
  const instance: Instance = { name, proc, port: 0, agent: new https.Agent({ keepAlive: true }), reloaded: [], peakRssKb: 0 };
  let pending = '';
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      if (!line.includes('"msg":"serving')) continue; // skip the per-review lines cheaply
      const entry = JSON.parse(line) as { msg: string; port?: number; serialNumber?: string };
      if (entry.msg === 'serving admission reviews over HTTPS') instance.port = entry.port!;
      if (entry.msg === 'serving a new certificate') instance.reloaded.push(entry.serialNumber!);
    }
  });
  proc.once('exit', (code) => (instance.exitCode = code));
  await until(() => instance.port !== 0 || instance.exitCode !== undefined, `${name} to listen`);
  if (instance.port === 0) throw new Error(`${name} did not start (exit ${instance.exitCode})`);
  await until(async () => (await httpsRequest({ port: instance.port, ca, path: '/readyz' }).catch(() => undefined))?.status === 200, `${name} to be ready`);
  return instance;
}

/** VmHWM (peak resident set) from /proc, in KiB; 0 where /proc is not there. */
async function sampleRss(instance: Instance): Promise<void> {
  try {
    const status = await readFile(`/proc/${instance.proc.pid}/status`, 'utf8');
    const kb = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
    instance.peakRssKb = Math.max(instance.peakRssKb, kb);
    peakRssKb[instance.name] = instance.peakRssKb;
  } catch {
    // exited between the check and the read
  }
}

async function stopInstance(instance: Instance): Promise<number | null | undefined> {
  await sampleRss(instance);
  if (instance.exitCode === undefined) {
    const exited = new Promise<void>((done) => instance.proc.once('exit', () => done()));
    instance.proc.kill('SIGTERM');
    await exited;
  }
  instance.agent.destroy();
  return instance.exitCode;
}

// --- the run -------------------------------------------------------------------------------

async function main(): Promise<number> {
  const problems: string[] = [];
  certDir = join(await mkdtemp(join(tmpdir(), 'webhook-soak-')), 'certs');
  const bundle = await servingCertificate();
  ca = bundle.caCertPem;
  await writeSecretDir(certDir, secretFiles(bundle));
  // Made before the load starts: RSA key generation would stall the client and show up as latency.
  const renewed: CertificateBundle[] = [];
  for (let i = 0; i < Math.ceil(durationMs / rotateEveryMs); i++) renewed.push(await servingCertificate(bundle));

  const instances = [await startInstance('a'), await startInstance('b')];
  /** What the round-robin client sends to, as a Service's ready endpoints. */
  let rotation = [...instances];
  const latenciesMs: number[] = [];
  let served = 0;
  let sent = 0;
  const failures: string[] = [];
  const started = Date.now();
  const deadline = started + durationMs;

  const worker = async () => {
    while (Date.now() < deadline) {
      const i = sent++;
      const target = rotation[i % rotation.length]!;
      const c = pick(i);
      const t0 = performance.now();
      try {
        const res = await httpsRequest({ port: target.port, ca, path: c.path, body: c.body, agent: target.agent });
        latenciesMs.push(performance.now() - t0);
        const ok = res.status === c.status && (c.allowed === undefined || JSON.parse(res.body).response.allowed === c.allowed);
        if (ok) served++;
        else failures.push(`${target.name}: HTTP ${res.status} for ${c.path}: ${res.body.slice(0, 200)}`);
      } catch (e) {
        failures.push(`${target.name}: ${String(e)}`);
      }
    }
  };
  const load = Promise.all(Array.from({ length: concurrency }, worker));

  const rssTimer = setInterval(() => instances.forEach((inst) => void sampleRss(inst)), 1_000);
  let rotations = 0;
  let restart: { exitCode: number | null | undefined; outOfRotationMs: number } | undefined;
  const control = async () => {
    let nextRotation = started + rotateEveryMs;
    const restartAt = started + durationMs / 2;
    while (Date.now() < deadline - 5_000) {
      if (restart === undefined && Date.now() >= restartAt) {
        const old = instances[1]!;
        const t0 = Date.now();
        rotation = rotation.filter((inst) => inst !== old);
        const exitCode = await stopInstance(old);
        const fresh = await startInstance('b2');
        instances[1] = fresh;
        rotation = [...rotation, fresh];
        restart = { exitCode, outOfRotationMs: Date.now() - t0 };
        if (exitCode !== 0) problems.push(`instance b exited ${exitCode} on SIGTERM`);
      }
      if (Date.now() >= nextRotation && rotations < renewed.length) {
        const next = renewed[rotations]!;
        await writeSecretDir(certDir, secretFiles(next));
        const fingerprint = new X509Certificate(next.certPem).fingerprint256;
        for (const inst of instances) {
          await until(async () => (await servedFingerprint(inst.port, ca)) === fingerprint, `${inst.name} to serve rotation ${rotations + 1}`, {
            timeoutMs: 30_000,
          }).catch((e: Error) => problems.push(e.message));
        }
        rotations++;
        nextRotation += rotateEveryMs;
      }
      await new Promise((done) => setTimeout(done, 200));
    }
  };
  await Promise.all([load, control()]);
  clearInterval(rssTimer);
  for (const inst of instances) {
    const code = await stopInstance(inst);
    if (code !== 0) problems.push(`instance ${inst.name} exited ${code} on SIGTERM`);
  }
  await rm(join(certDir, '..'), { recursive: true, force: true });

  latenciesMs.sort((x, y) => x - y);
  const quantile = (q: number) => latenciesMs[Math.min(latenciesMs.length - 1, Math.floor(q * latenciesMs.length))]?.toFixed(2);
  const elapsedS = (Date.now() - started) / 1000;
  const report = {
    duration: formatGoDuration(BigInt(Math.round(elapsedS * 1e9))),
    concurrency,
    requests: { sent, served, failed: failures.length, perSecond: Math.round(sent / elapsedS) },
    latencyMs: { p50: quantile(0.5), p99: quantile(0.99), max: latenciesMs.at(-1)?.toFixed(2) },
    certificateRotations: rotations,
    reloadsLogged: Object.fromEntries(instances.map((inst) => [inst.name, inst.reloaded.length])),
    restart,
    peakRssMiB: Object.fromEntries(Object.entries(peakRssKb).map(([name, kb]) => [name, Math.round(kb / 1024)])),
    problems,
    firstFailures: failures.slice(0, 10),
  };
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  return failures.length === 0 && problems.length === 0 && rotations > 0 && restart !== undefined ? 0 : 1;
}

// A hard bound even if something hangs: the run plus a minute.
setTimeout(() => {
  process.stderr.write('soak: did not finish in time\n');
  process.exit(1);
}, durationMs + 60_000).unref();

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`soak: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
