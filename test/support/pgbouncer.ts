import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort, reachable } from './servers';
import { waitFor } from './wait';

/**
 * A PgBouncer of the test file's own, in transaction mode, in front of the PostgreSQL of DATABASE_URL:
 * started on a free port in a beforeAll (`poolSize` server connections per database and user), stopped
 * in an afterAll.
 */
export interface PgBouncer {
  /** `url` (a PostgreSQL URL) through this PgBouncer: same database, user and password. */
  via(url: string): string;
  /** The PostgreSQL process ids of its server connections now (its admin console's SHOW SERVERS). */
  serverPids(): Promise<number[]>;
}

/** Debian installs it under /usr/sbin, which a user's PATH may lack. */
function binary(): string {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin'];
  const found = dirs
    .filter(Boolean)
    .map((dir) => path.join(dir, 'pgbouncer'))
    .find((p) => existsSync(p));
  if (!found) throw new Error('pgbouncer is not installed (apt-get install pgbouncer; .ci/run installs it)');
  return found;
}

const quoted = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

export function usePgBouncer(options: { poolSize: number }): PgBouncer {
  const target = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const user = decodeURIComponent(target.username || 'postgres');
  const password = decodeURIComponent(target.password);
  let port = 0;
  let stop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    port = await freePort();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pgbouncer-'));
    // Every database name is passed on to PostgreSQL as it is; the server login is the client's.
    const server = [`host=${target.hostname}`, `port=${target.port || 5432}`];
    if (password) server.push(`user=${quoted(user)}`, `password=${quoted(password)}`);
    writeFileSync(path.join(dir, 'users.txt'), `"${user}" ""\n`);
    writeFileSync(
      path.join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = ${server.join(' ')}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${path.join(dir, 'users.txt')}`,
        `admin_users = ${user}`,
        'pool_mode = transaction',
        `default_pool_size = ${options.poolSize}`,
        'reserve_pool_size = 0',
        'max_client_conn = 200',
        // pg sends none of the parameters PgBouncer would refuse; MikroORM's application_name is tracked.
        'ignore_startup_parameters = extra_float_digits',
        '',
      ].join('\n'),
    );
    // It refuses to run as root: as root (a CI container), it runs as nobody after reading its files.
    const args = [...(process.getuid?.() === 0 ? ['-u', 'nobody'] : []), path.join(dir, 'pgbouncer.ini')];
    const child = spawn(binary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    stop = async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    };
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`pgbouncer exited: ${output}`);
        return reachable(`postgres://127.0.0.1:${port}`, port, 200);
      },
      { what: `pgbouncer on port ${port}` },
    );
  });
  afterAll(async () => {
    await stop?.();
  });
  const via = (url: string) => {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(port);
    return u.toString();
  };
  return {
    via,
    async serverPids() {
      const admin = new URL(via(target.toString()));
      admin.pathname = '/pgbouncer';
      const client = new Client({ connectionString: admin.toString() });
      await client.connect();
      try {
        const { rows } = await client.query<{ remote_pid: string }>('show servers');
        return rows.map((r) => Number(r.remote_pid));
      } finally {
        await client.end();
      }
    },
  };
}
