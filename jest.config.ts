/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

// Workspace packages resolve to their TypeScript sources so tests never run stale dist/ builds.
const packages = ['core', 'db', 'queue', 'networks', 'ops', 'storage', 'safe-fetch'];

const config: Config = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'es6' } },
    ],
  },
  moduleNameMapper: {
    '^@sps/db/testing$': '<rootDir>/packages/db/src/testing.ts',
    '^@sps/db/sql$': '<rootDir>/packages/db/src/sql.ts',
    '^@sps/queue/connection$': '<rootDir>/packages/queue/src/connection.ts',
    '^@sps/core/essentials$': '<rootDir>/packages/core/src/essentials.ts',
    ...Object.fromEntries(packages.map((p) => [`^@sps/${p}$`, `<rootDir>/packages/${p}/src/index.ts`])),
    '^@sps/network-sim$': '<rootDir>/apps/network-sim/src/index.ts',
    '^@social-posts/client$': '<rootDir>/packages/client/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testMatch: ['<rootDir>/{packages,apps}/*/test/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  globalSetup: '<rootDir>/test/global-setup.mjs',
  // A loaded two-core CI box runs a multi-process test several times slower than alone; tests that wait on
  // processes set their own, longer limit from the waits they make.
  testTimeout: 60000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/summary-reporter.mjs'],
};

export default config;
