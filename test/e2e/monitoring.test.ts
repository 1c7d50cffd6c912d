/**
 * The alerts of deploy/components/monitoring/prometheusrule.yaml under Prometheus' own
 * promtool (built from github.com/prometheus/prometheus by test/e2e/monitoring/build.sh,
 * which pretest:e2e runs): `check rules` (expressions and annotation templates parse) and
 * `test rules` with test/e2e/monitoring/alerts.promtool.yaml, which must test every alert
 * firing and not firing.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { loadAlerts, loadPrometheusRule } from '../deploy/monitoring.js';
import { runProcess } from './cluster/processes.js';
import { ROOT } from './cluster/webhook.js';

const HERE = path.join(ROOT, 'test/e2e/monitoring');
const TESTS = path.join(HERE, 'alerts.promtool.yaml');

let dir: string;
let promtool: string;

beforeAll(async () => {
  const built = await runProcess('bash', [path.join(HERE, 'build.sh')], { timeoutMs: 280_000 });
  if (built.code !== 0) throw new Error(`test/e2e/monitoring/build.sh failed:\n${built.stderr}`);
  promtool = path.join(built.stdout.trim(), 'promtool');
  dir = await mkdtemp(path.join(tmpdir(), 'promtool-'));
  // promtool reads plain rule files: the PrometheusRule's groups, annotations left out
  // (promtool compares them whole; check rules below parses their templates).
  const groups = loadPrometheusRule().spec.groups.map((g) => ({ ...g, rules: g.rules.map(({ annotations: _, ...rule }) => rule) }));
  await writeFile(path.join(dir, 'rules.yaml'), stringify({ groups }));
  await writeFile(path.join(dir, 'annotated.yaml'), stringify({ groups: loadPrometheusRule().spec.groups }));
  await copyFile(TESTS, path.join(dir, 'alerts.promtool.yaml'));
}, 300_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('promtool', () => {
  it('check rules: the rule file, annotations included, is valid', async () => {
    const checked = await runProcess(promtool, ['check', 'rules', path.join(dir, 'annotated.yaml')]);
    expect({ code: checked.code, out: checked.stdout + checked.stderr }).toEqual({ code: 0, out: expect.stringContaining('SUCCESS') });
  });

  it('test rules: every alert fires, stays quiet and waits its for: as the tests say', async () => {
    const tested = await runProcess(promtool, ['test', 'rules', path.join(dir, 'alerts.promtool.yaml')], { timeoutMs: 120_000 });
    expect({ code: tested.code, out: tested.stdout + tested.stderr }).toEqual({ code: 0, out: expect.stringContaining('SUCCESS') });
  });

  it('test rules fails on every quiet expectation turned into the firing one (none of them is vacuous)', async () => {
    const tests = parse(await readFile(TESTS, 'utf8'));
    const flipped: string[] = [];
    for (const group of tests.tests as any[]) {
      for (const quiet of (group.alert_rule_test as any[]).filter((c) => c.exp_alerts.length === 0)) {
        const fires = (group.alert_rule_test as any[]).find((c) => c.alertname === quiet.alertname && c.exp_alerts.length > 0);
        if (fires === undefined) continue;
        quiet.exp_alerts = fires.exp_alerts;
        flipped.push(`alertname: ${quiet.alertname}, time: ${quiet.eval_time}`);
      }
    }
    await writeFile(path.join(dir, 'flipped.promtool.yaml'), stringify(tests));
    const tested = await runProcess(promtool, ['test', 'rules', path.join(dir, 'flipped.promtool.yaml')], { timeoutMs: 120_000 });
    expect(tested.code).toBe(1);
    const failed = (tested.stdout + tested.stderr).split('\n').flatMap((line) => /alertname: \S+, time: \S+?(?=,)/.exec(line.trim()) ?? []);
    expect(failed.sort()).toEqual(flipped.sort());
  });
});

describe('the promtool tests', () => {
  it.each(loadAlerts().map((a) => a.alert))('test %s firing and not firing', async (alert) => {
    const tests = parse(await readFile(TESTS, 'utf8'));
    const cases = (tests.tests as any[]).flatMap((t) => t.alert_rule_test as any[]).filter((c) => c.alertname === alert);
    expect({ alert, firing: cases.some((c) => c.exp_alerts.length > 0), quiet: cases.some((c) => c.exp_alerts.length === 0) }).toEqual({
      alert,
      firing: true,
      quiet: true,
    });
  });
});
