/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

// Workspace packages resolve to their TypeScript sources so tests never run stale dist/ builds.
const packages = ['core', 'db', 'queue', 'networks', 'ops', 'storage'];

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
  testTimeout: 30000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/summary-reporter.mjs'],
};

export default config;
