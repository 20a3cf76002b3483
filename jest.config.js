// Tests are written in TypeScript and compiled by `tsc` before jest runs, so jest only
// ever sees the same ES modules that ship; no transform sits between a test and the code.
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/dist/test'],
  testMatch: ['**/*.test.js'],
  transform: {},
  testTimeout: 120000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/scripts/summary-reporter.js'],
};
