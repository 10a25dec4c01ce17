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
// Packages published as ES modules only, compiled to CommonJS as the tests are: MikroORM 7 and its
// query builder with pg's type parsers (production loads them natively through Node 24's
// require(esm); jest's module loader cannot), and test-only ones (the Helm output's schemas, a
// Standard Webhooks verifier).
const ESM_ONLY = [
  '@mikro-orm',
  'kysely',
  'postgres-array',
  'postgres-date',
  'postgres-interval',
  'kubernetes-models',
  '@kubernetes-models',
  'is-cidr',
  'cidr-regex',
  'svix',
];
const swcJs = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'ecmascript' } }, module: { type: 'commonjs' } },
];
const common = {
  transform: { '^.+\\.ts$': swc, [`/node_modules/(${ESM_ONLY.join('|')})/.+\\.m?js$`]: swcJs },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  resolver: '<rootDir>/jest.resolver.cjs',
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
