import path from 'node:path';
import { defineConfig } from 'vite';

// Built to dist/, which the gateway serves at `/`. No plugin needed: esbuild compiles the JSX, and the
// contracts are compiled from source so the panel parses answers with the very schemas the services use.
export default defineConfig(({ command }) => {
  // A build is always React's production build, even when it runs under jest (NODE_ENV=test).
  if (command === 'build') process.env.NODE_ENV = 'production';
  return {
    root: path.resolve(__dirname, 'src'),
    base: '/',
    publicDir: false,
    esbuild: { jsx: 'automatic', jsxDev: command !== 'build' },
    resolve: {
      alias: { '@seller-api/contracts': path.resolve(__dirname, '../contracts/src/index.ts') },
    },
    build: {
      outDir: path.resolve(__dirname, 'dist'),
      emptyOutDir: true,
      target: 'es2022',
      // No inline scripts or styles anywhere: the gateway's Content-Security-Policy forbids them.
      modulePreload: { polyfill: false },
      assetsInlineLimit: 0,
      rollupOptions: {
        // zod's sources carry comments Rollup reads as misplaced annotations: harmless, and noisy.
        onwarn(warning, warn) {
          if (warning.code !== 'INVALID_ANNOTATION') warn(warning);
        },
      },
    },
    logLevel: 'warn',
  };
});
