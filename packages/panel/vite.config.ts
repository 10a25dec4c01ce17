import path from 'node:path';
import { defineConfig } from 'vite';

const here = import.meta.dirname;

// Built to dist/, which the gateway serves at `/`. No plugin needed: Oxc compiles the JSX, and the
// contracts are compiled from source so the panel parses answers with the very schemas the services use.
export default defineConfig(({ command }) => {
  // A build is always React's production build, even when it runs under jest (NODE_ENV=test).
  if (command === 'build') process.env.NODE_ENV = 'production';
  return {
    root: path.resolve(here, 'src'),
    base: '/',
    publicDir: false,
    oxc: { jsx: { runtime: 'automatic', development: command !== 'build' } },
    resolve: {
      alias: { '@seller-api/contracts': path.resolve(here, '../contracts/src/index.ts') },
    },
    build: {
      outDir: path.resolve(here, 'dist'),
      emptyOutDir: true,
      target: 'es2022',
      // No inline scripts or styles anywhere: the gateway's Content-Security-Policy forbids them.
      modulePreload: { polyfill: false },
      assetsInlineLimit: 0,
    },
    logLevel: 'warn',
  };
});
