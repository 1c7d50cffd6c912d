/**
 * The jest environment of the cluster tests (jest.cluster.config.js): Node's own, plus one
 * line per hook and test appended to phases.tsv in the cluster's directory
 * ($KUBE_E2E_DIR, set by test/kube/run.sh), so a run shows where its wall time went:
 *
 *   seconds<TAB>file<TAB>kind<TAB>name
 *
 * seconds with one decimal; kind is beforeAll, afterAll, beforeEach, afterEach or test;
 * name is the describe titles and the test's, joined by " › ". run.sh prints the slowest
 * lines after jest. A CommonJS file: jest loads the environment before any transform.
 */
const { appendFileSync } = require('node:fs');
const path = require('node:path');
const { TestEnvironment } = require('jest-environment-node');

/** The titles from the file's root describe to `block`, without jest's root block. */
function titles(block) {
  const names = [];
  for (let b = block; b && b.parent; b = b.parent) names.unshift(b.name);
  return names;
}

class PhaseTimingEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.file = path.relative(config.projectConfig.rootDir, context.testPath);
    this.started = new Map();
  }

  handleTestEvent(event) {
    const dir = process.env.KUBE_E2E_DIR;
    if (!dir) return;
    if (event.name === 'hook_start' || event.name === 'test_start') {
      this.started.set(event.hook ?? event.test, performance.now());
      return;
    }
    const done = { hook_success: 'hook', hook_failure: 'hook', test_done: 'test' }[event.name];
    if (done === undefined) return;
    const subject = done === 'hook' ? event.hook : event.test;
    const start = this.started.get(subject);
    if (start === undefined) return;
    this.started.delete(subject);
    const seconds = ((performance.now() - start) / 1000).toFixed(1);
    const kind = done === 'hook' ? subject.type : 'test';
    const name = (done === 'hook' ? titles(subject.parent) : [...titles(subject.parent), subject.name]).join(' › ') || '(file)';
    appendFileSync(path.join(dir, 'phases.tsv'), `${seconds}\t${this.file}\t${kind}\t${name}\n`);
  }
}

module.exports = PhaseTimingEnvironment;
