/** ESM + ts-jest: the package is "type": "module" (the Kubernetes client is ESM-only). */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/', '<rootDir>/test/kube/'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  // A bound, not a timing check: RSA key generation in a hook and loopback servers take
  // seconds on a loaded machine (.ci/run runs this suite beside the cluster test).
  testTimeout: 30_000,
};
