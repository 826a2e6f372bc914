/** @jest-config-loader esbuild-register */
import type { Config } from 'jest';

// ts-jest does not run with TypeScript 7, so tests are transformed by swc (see docs/decisions/toolchain-and-code.md, "Toolchain").
// Workspace packages map to their sources so tests never need a build first.
const transformed = {
  testEnvironment: 'node',
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', {}] },
  transformIgnorePatterns: ['/node_modules/(?!(@noble|@x402|@scure|@seriousme)/)'],
  moduleNameMapper: {
    '^@facilitator/([a-z-]+)$': '<rootDir>/packages/$1/src',
    // a package's test helpers (`@facilitator/db/testing`)
    '^@facilitator/([a-z-]+)/testing$': '<rootDir>/packages/$1/src/testing',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
} satisfies Config;

// The test services (Postgres, or an embedded one where none answers; the migrated template database).
// Jest runs a global setup once per run, and only when a selected project that names it has tests.
const withServices = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
} satisfies Config;

// Tests in test/ that read the repository's files and need neither services nor a build.
const REPO_CHECKS = ['compose', 'configuration-doc', 'decisions-index', 'docs', 'grafana-dashboard', 'openapi', 'test-tiers', 'unit-tier-offline'];
const IN_TEST_DIR = '<rootDir>/test/*.test.ts';
// where each kind of tier looks for its files (node_modules and build output stay out of the crawl)
const besideTheCode = { roots: ['<rootDir>/packages', '<rootDir>/apps'] };
const inTestDir = { roots: ['<rootDir>/test'] };

/**
 * The tiers: every `*.test.ts` belongs to exactly one (test/test-tiers.test.ts checks it). Run one with
 * `jest --selectProjects <name>` (the `test:<name>` npm scripts); `jest` alone runs them all.
 */
const projects: Config['projects'] = [
  {
    // beside the code, no Postgres, Redis or anvil (test/unit-tier-offline.test.ts runs it without them)
    displayName: 'unit',
    ...transformed,
    // a package is required when a test first uses it, not when a barrel names it: most unit tests never touch
    // bullmq, Prisma or the AWS SDK their packages' indexes import (a third less CPU for the tier; relative
    // imports stay eager). Unit tier only: the other tiers run as the compiled code loads.
    transform: { '^.+\\.(t|j)sx?$': ['@swc/jest', { module: { type: 'commonjs', lazy: true } }] },
    ...besideTheCode,
    testMatch: ['<rootDir>/{packages,apps}/**/*.test.ts'],
    testPathIgnorePatterns: [...transformed.testPathIgnorePatterns, '\\.int\\.test\\.ts$'],
  },
  { displayName: 'int', ...transformed, ...besideTheCode, ...withServices, testMatch: ['<rootDir>/{packages,apps}/**/*.int.test.ts'] },
  {
    // the flows, and the few top-level suites that run the compiled apps without being flows (start-up
    // configuration, the production image's dependencies, the bare-machine runs)
    displayName: 'e2e',
    ...transformed,
    ...inTestDir,
    ...withServices,
    testMatch: [IN_TEST_DIR],
    testPathIgnorePatterns: [...transformed.testPathIgnorePatterns, ...REPO_CHECKS.map((name) => `/test/${name}\\.test\\.ts$`)],
  },
  { displayName: 'reliability', ...transformed, ...inTestDir, ...withServices, testMatch: ['<rootDir>/test/reliability/**/*.test.ts'] },
  { displayName: 'abuse', ...transformed, ...inTestDir, ...withServices, testMatch: ['<rootDir>/test/abuse/**/*.test.ts'] },
  { displayName: 'browser', ...transformed, ...inTestDir, ...withServices, testMatch: ['<rootDir>/test/browser/**/*.test.ts'] },
  { displayName: 'repo', ...transformed, ...inTestDir, testMatch: REPO_CHECKS.map((name) => `<rootDir>/test/${name}.test.ts`) },
];

const config: Config = {
  projects,
  // read by jest's runner from the run's own settings, not a project's, so it is set once here for all
  testTimeout: 60_000,
};

export default config;
