/**
 * The one-node cluster tests (test/kube): the image built from the Dockerfile, installed
 * from deploy/ onto a real kube-apiserver, controller-manager, scheduler, kube-proxy and
 * kubelet with containerd, inside a network namespace. Root only; run with
 * `npm run test:cluster`, which builds what every file needs first (the files build the rest).
 */
export default {
  // Node's environment, timing every hook and test into the cluster's phases.tsv.
  testEnvironment: '<rootDir>/test/kube/phase-timing.cjs',
  roots: ['<rootDir>/test/kube'],
  testMatch: ['**/*.test.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  // Files needing only what pretest:cluster builds first (sequencer.cjs).
  testSequencer: '<rootDir>/test/kube/sequencer.cjs',
  testTimeout: 600000,
};
