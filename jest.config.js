// Unit tests sit beside the code (`*.test.ts` under packages/ and services/); integration ("medium")
// tests live under test/ and talk to the real PostgreSQL, Redis and RabbitMQ.
const swc = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
];
const moduleNameMapper = {
  '^@seller-api/service-kit/tracing$': '<rootDir>/packages/service-kit/src/tracing.ts',
  '^@seller-api/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
};
const swcJs = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'ecmascript' } }, module: { type: 'commonjs' } },
];
const common = {
  transform: { '^.+\\.ts$': swc, '^.+\\.js$': swcJs },
  transformIgnorePatterns: [
    '/node_modules/(?!(@mikro-orm|kysely|postgres-array|postgres-date|postgres-interval)/)',
  ],
  moduleNameMapper,
  testEnvironment: 'node',
};

/** @type {import('jest').Config} */
module.exports = {
  // Integration tests start real services; unit tests finish far below this.
  testTimeout: 30000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{packages,services}/*/src/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
    },
  ],
};
