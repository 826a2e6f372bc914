/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';
import base from './jest.config';

// The unit tier: the tests beside the code that need no Postgres, Redis or anvil (those are named
// `*.int.test.ts`), with no global setup (which builds the template database). `npm run test:unit`.
const config: Config = {
  ...base,
  roots: ['<rootDir>/packages', '<rootDir>/apps'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: [...(base.testPathIgnorePatterns ?? []), '\\.int\\.test\\.ts$'],
  globalSetup: undefined,
  globalTeardown: undefined,
};

export default config;
