import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { SERVICES } from '../../scripts/stack.cjs';
import { testEnv } from './env';
import { deleteQueues } from './queues';
import { freePort } from './servers';
import { SERVICE_QUEUES } from './system';
import { waitFor } from './wait';

export const ROOT = path.resolve(__dirname, '../..');

/** One build at a time per checkout: two test files building into the same dist/ would trip on each other. */
const BUILD_LOCK = path.join(
  os.tmpdir(),
  `seller-api-build-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.lock`,
);

/**
 * `npm run build`, the first half of `npm start`, once at a time. Turbo skips what is up to date, so
 * after the first file's build the others' take a second.
 */
export async function buildOnce(): Promise<void> {
  await waitFor(
    () => {
      try {
        fs.mkdirSync(BUILD_LOCK);
        return true;
      } catch {
        // A lock older than five minutes belongs to a build that died.
        const age = Date.now() - (fs.statSync(BUILD_LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
        if (age > 300_000) fs.rmSync(BUILD_LOCK, { recursive: true, force: true });
        return false;
      }
    },
    { timeoutMs: 300_000, intervalMs: 250, what: 'the build lock' },
  );
  try {
    execFileSync('npm', ['run', 'build', '--silent'], {
      cwd: ROOT,
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 300_000,
    });
  } finally {
    fs.rmSync(BUILD_LOCK, { recursive: true, force: true });
  }
}

export interface StartedSystem {
  /** The environment it runs with; a command run with it reaches this system (npm run cli included). */
  env: NodeJS.ProcessEnv;
  /** `http://127.0.0.1:<gateway port>/api/v1`. */
  api: string;
  gatewayPort: number;
  /** Everything `npm start` printed so far (the services' logs), for a failing test's message. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * The system as README.md runs it: `npm start` (its build, then scripts/start.mjs) in a child process,
 * with NODE_ENV=development, on free ports, against this test file's own database (dropped first, so
 * every run starts empty), queues and Redis prefix.
 */
export async function startWithNpmStart(overrides: Record<string, string> = {}): Promise<StartedSystem> {
  await buildOnce();
  const ports: Record<string, string> = {};
  // The root variables `npm start` (scripts/start.mjs) turns into each service's PORT and METRICS_PORT.
  for (const { env: prefix } of SERVICES) {
    ports[`${prefix}_PORT`] = String(await freePort());
    ports[`${prefix}_METRICS_PORT`] = String(await freePort());
  }
  const base = testEnv({
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    // Local targets are what a plain `npm start` opens: loopback (scripts/start.mjs), nothing private.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false',
    ...ports,
    ...overrides,
  });
  delete base.PORT;
  delete base.METRICS_PORT;
  const env: NodeJS.ProcessEnv = { ...process.env, ...base, NO_COLOR: '1', TURBO_TELEMETRY_DISABLED: '1' };
  await dropDatabase(env.DATABASE_URL as string);

  let output = '';
  const child: ChildProcess = spawn(process.execPath, [path.join(ROOT, 'scripts/start.mjs')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await deleteQueues(env.AMQP_URL as string, env.AMQP_NAMESPACE as string, SERVICE_QUEUES);
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`npm start exited:\n${output}`);
        const answers = await Promise.all(
          SERVICES.map((s) =>
            fetch(`http://127.0.0.1:${ports[`${s.env}_PORT`]}/readyz`).then(
              (res) => res.ok,
              () => false,
            ),
          ),
        );
        return answers.every(Boolean);
      },
      { timeoutMs: 60_000, intervalMs: 200, what: 'the services of npm start to be ready' },
    );
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${output}`, { cause: err });
  }
  const gatewayPort = Number(ports.GATEWAY_PORT);
  return {
    env,
    api: `http://127.0.0.1:${gatewayPort}/api/v1`,
    gatewayPort,
    output: () => output,
    stop,
  };
}

async function dropDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  target.pathname = '/postgres';
  const client = new Client({ connectionString: target.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists "${name.replace(/"/g, '""')}" with (force)`);
  } finally {
    await client.end();
  }
}
