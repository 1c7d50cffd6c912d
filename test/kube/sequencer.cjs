/**
 * The cluster files in a fixed order: first those that need only what `pretest:cluster`
 * builds (the API server, the kube tools, the image), then those that need a tool `.ci/run`
 * builds in the background meanwhile, in the order .ci/run builds them (test/kube/README.md).
 * A file not listed runs after these, in jest's order.
 */
const path = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const ORDER = ['twonode', 'image', 'tenant', 'install', 'neighbour', 'helm', 'certmanager', 'release'];
const rank = (test) => {
  const i = ORDER.indexOf(path.basename(test.path, '.test.ts'));
  return i === -1 ? ORDER.length : i;
};

module.exports = class ToolsLast extends Sequencer {
  async sort(tests) {
    return [...(await super.sort(tests))].sort((a, b) => rank(a) - rank(b));
  }
};
