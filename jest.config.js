// @ts-check
/** Three tiers, one command: unit specs beside the code, integration specs against the
 *  real Postgres and Redis with the real migrations, end-to-end specs that start the
 *  built processes. */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];
const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^@switchyard/([^/]+)$': '<rootDir>/libs/$1/src', '^@switchyard/([^/]+)/(.+)$': '<rootDir>/libs/$1/src/$2' },
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/'],
};
/** @type {import('jest').Config} */
module.exports = {
  // A global option: jest ignores testTimeout inside `projects`. End-to-end hooks start real
  // processes, which takes seconds on a loaded 2-core machine.
  testTimeout: 120_000,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{apps,libs}/*/src/**/*.spec.ts', '<rootDir>/docker/**/*.spec.ts', '<rootDir>/bench/src/**/*.spec.ts'] },
    { ...shared, displayName: 'integration', testMatch: ['<rootDir>/{apps,libs}/*/src/**/*.int-spec.ts'] },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'] },
  ],
};
