/**
 * Least privilege between the services (docs/deploy.md, "One role and one broker user per service"):
 * each service has its own PostgreSQL role, owner of its own schema only, and its own RabbitMQ user,
 * which may write to its own exchange and read its own queues only. `npm start` (scripts/start.mjs)
 * and the tests create the roles with `serviceRolesSql`; deploy/postgres/service-roles.sql is its
 * output for the default names, and the RabbitMQ definitions of docker-compose.yml hold
 * `amqpPermissions` for an empty namespace (test/ops checks both).
 *
 * Kept free of imports so that scripts load it from the built kit without the rest of the runtime.
 */

export interface ServiceAccess {
  /** The service's directory under services/. */
  service: string;
  /** Its PostgreSQL schema (services/<service>/src/db/migrations.ts, SCHEMA). */
  schema: string;
  /** Its PostgreSQL role and RabbitMQ user. */
  role: string;
  /**
   * The prefix of every exchange and queue it owns (`orders.` for `orders.events` and
   * `orders.charges.quorum`), or null when it owns none.
   */
  amqpPrefix: string | null;
  /** Other services' exchanges its queues bind to (it reads them, never declares them). */
  amqpSources: string[];
}

export const SERVICE_ACCESS: readonly ServiceAccess[] = [
  {
    service: 'gateway',
    schema: 'gateway',
    role: 'sa_gateway',
    amqpPrefix: null,
    amqpSources: [],
  },
  {
    service: 'orders',
    schema: 'orders',
    role: 'sa_orders',
    amqpPrefix: 'orders.',
    amqpSources: ['payments.events'],
  },
  {
    service: 'payments',
    schema: 'payments',
    role: 'sa_payments',
    amqpPrefix: 'payments.',
    amqpSources: [],
  },
  {
    service: 'withdrawals',
    schema: 'withdrawals',
    role: 'sa_withdrawals',
    amqpPrefix: 'withdrawals.',
    amqpSources: ['payments.events'],
  },
  {
    service: 'webhook-dispatcher',
    schema: 'webhooks',
    role: 'sa_webhooks',
    amqpPrefix: 'webhooks.',
    amqpSources: ['orders.events', 'payments.events', 'withdrawals.events'],
  },
];

const quoteLiteral = (value: string) => `'${value.replace(/'/g, "''")}'`;

/**
 * One idempotent statement (a DO block) that, run by a superuser (or a role with CREATEROLE that
 * owns the objects), gives each service its role: creates the role (LOGIN, no password: set it
 * apart), lets it connect, creates its schema owned by it, and makes it the owner of the schema and
 * of everything in it (tables with their indexes, triggers and column sequences; views; other
 * sequences; functions; types). Run again after a deployment whose schemas belonged to one shared
 * role, it hands them over. Roles get no CREATE on the database: a service cannot make itself
 * another schema.
 */
export function serviceRolesSql(
  access: readonly Pick<ServiceAccess, 'schema' | 'role'>[] = SERVICE_ACCESS,
): string {
  const pairs = access.map((a) => `[${quoteLiteral(a.schema)}, ${quoteLiteral(a.role)}]`).join(', ');
  return `do $roles$
declare
  pair text[];
  item record;
begin
  foreach pair slice 1 in array array[${pairs}]::text[] loop
    if not exists (select 1 from pg_roles where rolname = pair[2]) then
      execute format('create role %I login', pair[2]);
    end if;
    -- Handing objects to a role needs membership in it, unless we are a superuser (managed databases).
    if not (select rolsuper from pg_roles where rolname = current_user) then
      execute format('grant %I to %I', pair[2], current_user);
    end if;
    execute format('grant connect on database %I to %I', current_database(), pair[2]);
    execute format('create schema if not exists %I authorization %I', pair[1], pair[2]);
    execute format('alter schema %I owner to %I', pair[1], pair[2]);
    -- Tables first: their indexes, triggers and column sequences follow them.
    for item in
      select c.oid::regclass::text as name, c.relkind from pg_class c
      where c.relnamespace = pair[1]::regnamespace and c.relkind in ('r', 'p', 'f', 'v', 'm')
        and c.relowner <> pair[2]::regrole
    loop
      execute format('alter %s %s owner to %I',
        case item.relkind when 'v' then 'view' when 'm' then 'materialized view'
          when 'f' then 'foreign table' else 'table' end, item.name, pair[2]);
    end loop;
    for item in
      select c.oid::regclass::text as name from pg_class c
      where c.relnamespace = pair[1]::regnamespace and c.relkind = 'S' and c.relowner <> pair[2]::regrole
    loop
      execute format('alter sequence %s owner to %I', item.name, pair[2]);
    end loop;
    for item in
      select p.oid::regprocedure::text as name from pg_proc p
      where p.pronamespace = pair[1]::regnamespace and p.proowner <> pair[2]::regrole
    loop
      execute format('alter routine %s owner to %I', item.name, pair[2]);
    end loop;
    for item in
      select t.oid::regtype::text as name, t.typtype from pg_type t
      where t.typnamespace = pair[1]::regnamespace and t.typowner <> pair[2]::regrole
        and t.typelem = 0 and (t.typtype in ('e', 'd', 'r')
          or (t.typtype = 'c' and (select relkind from pg_class where oid = t.typrelid) = 'c'))
    loop
      execute format('alter %s %s owner to %I',
        case item.typtype when 'd' then 'domain' else 'type' end, item.name, pair[2]);
    end loop;
  end loop;
end
$roles$;
`;
}

/** A RabbitMQ user's permissions in the vhost: regular expressions over resource names. */
export interface AmqpPermissions {
  configure: string;
  write: string;
  read: string;
}

/** Escapes a name for a RabbitMQ permission regex (Erlang `re`, PCRE syntax). */
export function regexLiteral(name: string): string {
  return name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Nothing: `^$` matches no resource (the default exchange is checked as `amq.default`). */
const NONE = '^$';

/**
 * The permissions of `access`'s user for exchanges and queues prefixed with `namespace`
 * (AMQP_NAMESPACE). What the kit's broker does and what it needs (RabbitMQ's access control):
 * - declaring an exchange or a queue, or deleting one (the classic-queue upgrade): configure on it;
 *   a producer's exchange that a consumer may not declare must exist (broker.ts);
 * - binding a queue to an exchange: write on the queue, read on the exchange;
 * - publishing: write on the exchange (its own events; parking goes to the queue's own dead-letter
 *   exchange, `<name>.dlx`);
 * - consuming or getting: read on the queue;
 * - creating a queue that dead-letters to an exchange: read on the queue, write on that exchange (its
 *   own `<name>.dlx`).
 * Every name a service owns starts with its prefix, so nothing else is needed: no right on another
 * service's exchange but read (to bind), none on the default exchange or on the `dlx` that queues
 * created by earlier builds still dead-letter through (broker.ts, declare).
 */
export function amqpPermissions(access: ServiceAccess, namespace = ''): AmqpPermissions {
  const ns = regexLiteral(namespace);
  const own = access.amqpPrefix ? [regexLiteral(access.amqpPrefix)] : [];
  const sources = access.amqpSources.map((name) => `${regexLiteral(name)}$`);
  const anyOf = (alternatives: string[]) =>
    alternatives.length === 0 ? NONE : `^${ns}(${alternatives.join('|')})`;
  return {
    configure: anyOf(own),
    write: anyOf(own),
    read: anyOf([...own, ...sources]),
  };
}
