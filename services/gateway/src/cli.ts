// Operator CLI: `npm run cli -- keys create ...`, `users create|update ...` (docs/api.md) and
// `webhooks listen ...` (docs/webhooks.md, "Local receivers"). The plain key is printed alone on the
// last line of stdout; everything else goes to stderr. Passwords are read from a prompt without echo
// or from stdin, never needed on the command line, which npm prints (docs/panel.md).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import { Environment, Role } from '@seller-api/contracts';
import {
  ConfigError,
  commonEnv,
  databaseEnv,
  databaseOptionsOf,
  ensureDatabase,
  loadConfig,
  migrate,
  openDatabase,
  createLogger,
  processIo,
  sqlOf,
  type CliIo,
} from '@seller-api/service-kit';
import { z } from 'zod';
import { gatewayEnv } from './config';
import { entities } from './db/entities';
import { SCHEMA, migrations } from './db/migrations';
import { UserConflictError } from './domain/accounts';
import { createApiKey } from './db/api-keys';
import { KeyChangeUnavailableError, KeyVersions } from './db/key-holders';
import { renameSeller } from './db/sellers';
import { ensureUser } from './db/users';
import { revokeUserSessions } from './panel/sessions';
import { readPasswordFromProcess, type PasswordReader } from './password-input';
import { ListenApiError, ListenUsageError, listenForWebhooks, parseEvents } from './webhooks-listen';

const USAGE = `usage:
  cli keys create --email <e-mail> --env test|live [--label <text>] [--role seller|operator] [--seller-name <name>]
  cli users create --email <e-mail> [--password-stdin] [--role seller|operator] [--seller-name <name>]
      (the password is asked without echo on a terminal, else read from stdin's first line)
  cli users update --email <e-mail> --seller-name <name>
  cli webhooks listen --key <test key> | --key-file <file> [--events order.paid,...] [--port <n>] [--api <base URL>]`;

class UsageError extends Error {}

/** The key in a file (as `keys create ... | tail -1 > file` writes it), or a usage error. */
function readKeyFile(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new UsageError(
      `--key-file: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

/** The public API of a locally run system: GATEWAY_PORT as `npm start` uses it. */
function defaultApi(env: NodeJS.ProcessEnv): string {
  return env.SELLER_API_URL ?? `http://127.0.0.1:${env.GATEWAY_PORT ?? '8080'}/api/v1`;
}

const Email = z.email();

function parse(argv: string[], env: NodeJS.ProcessEnv) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      env: { type: 'string' },
      label: { type: 'string' },
      // No default: for an existing user, a role given must be its own (see ensureUser).
      role: { type: 'string' },
      'seller-name': { type: 'string' },
      // Still accepted, for scripts that use it; npm prints it with the command line (--password-stdin).
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      key: { type: 'string' },
      'key-file': { type: 'string' },
      events: { type: 'string' },
      port: { type: 'string' },
      api: { type: 'string' },
    },
  });
  const [resource, action] = positionals;
  if (resource === 'webhooks' && action === 'listen') {
    // A key on the command line is printed by npm: README.md uses --key-file.
    const key =
      values['key-file'] !== undefined ? readKeyFile(values['key-file']) : (values.key ?? env.SELLER_API_KEY);
    if (!key) throw new UsageError('--key, --key-file or SELLER_API_KEY must give a test API key');
    const port = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError('--port must be a port number (0 or none: a free one)');
    return {
      resource,
      action,
      key,
      port,
      api: values.api ?? defaultApi(env),
      events: parseEvents(values.events),
    } as const;
  }
  if (resource === 'users' && action === 'update') {
    const email = Email.safeParse(values.email);
    if (!email.success) throw new UsageError('--email must be a valid e-mail address');
    const name = values['seller-name']?.trim();
    if (!name) throw new UsageError('--seller-name must be given, not empty');
    if (name.length > 255) throw new UsageError('--seller-name must have at most 255 characters');
    return { resource, action, email: email.data, sellerName: name } as const;
  }
  if (action !== 'create' || (resource !== 'keys' && resource !== 'users')) throw new UsageError(USAGE);
  const email = Email.safeParse(values.email);
  if (!email.success) throw new UsageError('--email must be a valid e-mail address');
  const role = Role.optional().safeParse(values.role);
  if (!role.success) throw new UsageError('--role must be seller or operator');
  if (values['seller-name'] !== undefined && role.data === 'operator')
    throw new UsageError('--seller-name is for seller users only');
  if (resource === 'keys') {
    const environment = Environment.safeParse(values.env);
    if (!environment.success) throw new UsageError('--env must be test or live');
    return {
      resource,
      action,
      email: email.data,
      role: role.data,
      env: environment.data,
      label: values.label ?? null,
      sellerName: values['seller-name'],
    } as const;
  }
  if (values.password !== undefined && values['password-stdin'])
    throw new UsageError('give the password once: --password or --password-stdin');
  return {
    resource,
    action,
    email: email.data,
    role: role.data,
    password: values.password,
    passwordStdin: values['password-stdin'] === true,
    sellerName: values['seller-name'],
  } as const;
}

type Command = ReturnType<typeof parse>;

const MIN_PASSWORD = 8;

/** The new password: `--password` if given, else the prompt (a terminal) or stdin's first line. */
async function passwordOf(
  command: Extract<Command, { resource: 'users'; action: 'create' }>,
  readPassword: PasswordReader,
): Promise<string> {
  const password =
    command.password ?? (await readPassword({ confirm: true, fromStdin: command.passwordStdin }));
  if (password.length < MIN_PASSWORD)
    throw new UsageError(`the password must have at least ${MIN_PASSWORD} characters`);
  return password;
}

/** Runs one command; returns the exit code (0 ok, 1 failure, 2 usage or configuration error). */
export async function runCli(
  argv: string[],
  io: CliIo = processIo,
  options: { readPassword?: PasswordReader; signal?: AbortSignal } = {},
): Promise<number> {
  try {
    const command = parse(argv, io.env);
    if (command.resource === 'webhooks') {
      await listenForWebhooks({ ...command, signal: options.signal ?? stopSignal() }, io);
      return 0;
    }
    if (command.resource === 'users' && command.action === 'create' && command.password !== undefined) {
      // npm prints the command line and `ps` shows it: the prompt or --password-stdin keep it out.
      io.stderr(
        'warning: --password puts the password in the command line; prefer the prompt or --password-stdin\n',
      );
    }
    const password =
      command.resource === 'users' && command.action === 'create'
        ? await passwordOf(command, options.readPassword ?? readPasswordFromProcess)
        : undefined;
    await execute(command, password, io);
    return 0;
  } catch (err) {
    if (err instanceof UserConflictError || err instanceof ListenApiError) {
      io.stderr(`refused: ${err.message}\n`);
      return 1;
    }
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof ListenUsageError) {
      io.stderr(`${err.message}\n`);
      return 2;
    }
    io.stderr(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

/** Aborted by Ctrl-C or SIGTERM: a listener stops and removes its webhooks. */
function stopSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = () => controller.abort();
  // `on`, not `once`: Ctrl-C reaches this process both from the terminal and through scripts/cli.mjs,
  // and a second signal must not cut the removal of the webhooks short.
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return controller.signal;
}

async function execute(
  command: Exclude<Command, { resource: 'webhooks' }>,
  password: string | undefined,
  io: CliIo,
): Promise<void> {
  const config = loadConfig(
    {
      ...databaseEnv,
      NODE_ENV: commonEnv.NODE_ENV,
      // The gateway's Redis: panel sessions live there (a new password ends them), and key changes are
      // announced there (KeyVersions).
      REDIS_URL: gatewayEnv.REDIS_URL,
      REDIS_KEY_PREFIX: gatewayEnv.REDIS_KEY_PREFIX,
    },
    io.env,
  );
  const logger = createLogger('gateway-cli', 'silent');
  if (config.NODE_ENV !== 'production') await ensureDatabase(config.DATABASE_URL);
  const orm = await openDatabase({
    ...databaseOptionsOf(config),
    schema: SCHEMA,
    entities,
    migrations,
    logger,
    poolMax: 2,
  });
  try {
    await migrate(orm, SCHEMA);
    const em = orm.em.fork();
    const sql = sqlOf(orm);
    if (command.resource === 'users' && command.action === 'update') {
      // The name is in every gateway replica's cached key holders: renaming is a key change, which
      // needs Redis as `keys create` does (KeyVersions).
      const redis = await connectRedis(config).catch((err: unknown) => {
        throw new KeyChangeUnavailableError(err);
      });
      try {
        const { user, previous } = await renameSeller(
          sql,
          em,
          new KeyVersions(redis, config.REDIS_KEY_PREFIX),
          command.email,
          command.sellerName,
        );
        io.stderr(
          `renamed the seller of ${user.email} from "${previous}" to "${command.sellerName}": new orders, ` +
            'charges and withdrawals carry it; existing ones keep the name they were made with.\n',
        );
        io.stdout(`${user.id}\n`);
      } finally {
        redis.disconnect();
      }
      return;
    }
    if (command.resource === 'users') {
      const { user, created } = await ensureUser(sql, em, {
        email: command.email,
        role: command.role,
        sellerName: command.sellerName,
        password,
      });
      io.stderr(
        created
          ? `created ${user.role} user ${user.email}\n`
          : `set a new password for the existing ${user.role} user ${user.email}\n`,
      );
      if (!created) await endSessions(config, user.id, io);
      io.stdout(`${user.id}\n`);
      return;
    }
    // A new key revokes the previous one, which every gateway replica learns through Redis: without
    // Redis, nothing is created (KeyVersions).
    const redis = await connectRedis(config).catch((err: unknown) => {
      throw new KeyChangeUnavailableError(err);
    });
    let created: Awaited<ReturnType<typeof createApiKey>>;
    try {
      const { user } = await ensureUser(sql, em, {
        email: command.email,
        role: command.role,
        sellerName: command.sellerName,
      });
      created = await createApiKey(
        sql,
        em,
        new KeyVersions(redis, config.REDIS_KEY_PREFIX),
        user.id,
        command.env,
        command.label,
      );
    } finally {
      redis.disconnect();
    }
    const { key, record } = created;
    io.stderr(
      `new ${record.environment} key ${record.prefix}…${record.last4} for ${command.email}; any previous ${record.environment} key of this user is revoked.\n` +
        'The key is shown once: store it now.\n',
    );
    io.stdout(`${key}\n`);
  } finally {
    await orm.close(true);
  }
}

/**
 * A changed password ends the user's open panel sessions. The password is already changed when this
 * runs, so Redis being unreachable is a warning, not a failure: the old sessions then last until they
 * expire (PANEL_SESSION_TTL_SECONDS after their login) unless Redis is reached by running this again.
 */
async function endSessions(
  config: { REDIS_URL: string; REDIS_KEY_PREFIX: string },
  userId: string,
  io: CliIo,
): Promise<void> {
  try {
    const redis = await connectRedis(config);
    const ended = await revokeUserSessions(redis, config.REDIS_KEY_PREFIX, userId).finally(() =>
      redis.disconnect(),
    );
    io.stderr(`ended ${ended} open panel session(s) of this user\n`);
  } catch (err) {
    io.stderr(
      `warning: Redis (REDIS_URL) is unreachable (${(err as Error).message}): the password is changed, but ` +
        "this user's open panel sessions were not ended; run the command again when Redis is back.\n",
    );
  }
}

/** The gateway's Redis, connected, or the connection error (no retries: a CLI run is short). */
async function connectRedis(config: { REDIS_URL: string }): Promise<Redis> {
  const redis = new Redis(config.REDIS_URL, {
    lazyConnect: true,
    protocol: 2, // as the service (service.ts)
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: () => null,
  });
  // Connection errors come back from connect() below; without a listener they would also be thrown.
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return redis;
  } catch (err) {
    redis.disconnect();
    throw err;
  }
}

if (require.main === module) {
  void runCli(process.argv.slice(2)).then((code) => process.exit(code));
}
