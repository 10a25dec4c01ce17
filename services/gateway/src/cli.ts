// Operator CLI: `npm run cli -- keys create ...` and `npm run cli -- users create ...` (docs/api.md).
// The plain key is printed alone on the last line of stdout; everything else goes to stderr.
import { parseArgs } from 'node:util';
import Redis from 'ioredis';
import { Environment, Role } from '@seller-api/contracts';
import {
  ConfigError,
  commonEnv,
  ensureDatabase,
  loadConfig,
  migrate,
  openDatabase,
  createLogger,
  processIo,
  type CliIo,
} from '@seller-api/service-kit';
import { z } from 'zod';
import { gatewayEnv } from './config';
import { entities } from './db/entities';
import { SCHEMA, migrations } from './db/migrations';
import { UserConflictError, ensureUser } from './domain/accounts';
import { createApiKey } from './domain/api-keys';
import { KeyChangeUnavailableError, KeyVersions } from './domain/key-holders';
import { revokeUserSessions } from './panel/sessions';

const USAGE = `usage:
  cli keys create --email <e-mail> --env test|live [--label <text>] [--role seller|operator] [--seller-name <name>]
  cli users create --email <e-mail> --password <password> [--role seller|operator] [--seller-name <name>]`;

class UsageError extends Error {}

const Email = z.email();

function parse(argv: string[]) {
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
      password: { type: 'string' },
    },
  });
  const [resource, action] = positionals;
  if (action !== 'create' || (resource !== 'keys' && resource !== 'users')) throw new UsageError(USAGE);
  const email = Email.safeParse(values.email);
  if (!email.success) throw new UsageError('--email must be a valid e-mail address');
  const role = Role.optional().safeParse(values.role);
  if (!role.success) throw new UsageError('--role must be seller or operator');
  if (values['seller-name'] !== undefined && role.data === 'operator')
    throw new UsageError('--seller-name is for seller users only');
  if (resource === 'keys') {
    const env = Environment.safeParse(values.env);
    if (!env.success) throw new UsageError('--env must be test or live');
    return {
      resource,
      email: email.data,
      role: role.data,
      env: env.data,
      label: values.label ?? null,
      sellerName: values['seller-name'],
    } as const;
  }
  if (!values.password || values.password.length < 8)
    throw new UsageError('--password must have at least 8 characters');
  return {
    resource,
    email: email.data,
    role: role.data,
    password: values.password,
    sellerName: values['seller-name'],
  } as const;
}

/** Runs one command; returns the exit code (0 ok, 1 failure, 2 usage or configuration error). */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  try {
    await execute(parse(argv), io);
    return 0;
  } catch (err) {
    if (err instanceof UserConflictError) {
      io.stderr(`refused: ${err.message}\n`);
      return 1;
    }
    if (err instanceof UsageError || err instanceof ConfigError) {
      io.stderr(`${err.message}\n`);
      return 2;
    }
    io.stderr(`error: ${(err as Error).message}\n`);
    return 1;
  }
}

async function execute(command: ReturnType<typeof parse>, io: CliIo): Promise<void> {
  const config = loadConfig(
    {
      DATABASE_URL: commonEnv.DATABASE_URL,
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
    url: config.DATABASE_URL,
    schema: SCHEMA,
    entities,
    migrations,
    logger,
    poolMax: 2,
  });
  try {
    await migrate(orm, SCHEMA);
    const em = orm.em.fork();
    if (command.resource === 'users') {
      const { user, created } = await ensureUser(em, {
        email: command.email,
        role: command.role,
        sellerName: command.sellerName,
        password: command.password,
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
      const { user } = await ensureUser(em, {
        email: command.email,
        role: command.role,
        sellerName: command.sellerName,
      });
      created = await createApiKey(
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
