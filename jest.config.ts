/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

// ts-jest does not run with TypeScript 7, so tests are transformed by swc (see docs/decisions.md).
// Workspace packages map to their sources so tests never need a build first.
const config: Config = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/apps', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', {}] },
  transformIgnorePatterns: ['/node_modules/(?!(@noble|@x402|@scure|@seriousme)/)'],
  moduleNameMapper: {
    '^@facilitator/([a-z-]+)$': '<rootDir>/packages/$1/src',
    // a package's test helpers (`@facilitator/db/testing`)
    '^@facilitator/([a-z-]+)/testing$': '<rootDir>/packages/$1/src/testing',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60_000,
};

export default config;
