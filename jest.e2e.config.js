/**
 * End-to-end tests (test/e2e): slower, and they need the Go toolchain (the Go oracle in
 * test/e2e/oracle checks the webhook against Go's own time and YAML packages).
 * Run with: NODE_OPTIONS=--experimental-vm-modules jest -c jest.e2e.config.js
 */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/e2e'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  testTimeout: 300000,
};
