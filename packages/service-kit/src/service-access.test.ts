import {
  SERVICE_ACCESS,
  amqpPermissions,
  regexLiteral,
  serviceRolesSql,
  type ServiceAccess,
} from './service-access';

const access = (service: string): ServiceAccess => {
  const found = SERVICE_ACCESS.find((a) => a.service === service);
  if (!found) throw new Error(service);
  return found;
};
const matches = (regex: string, name: string) => new RegExp(regex).test(name);

describe('service access', () => {
  it('gives every service a role and a schema of its own', () => {
    const roles = SERVICE_ACCESS.map((a) => a.role);
    const schemas = SERVICE_ACCESS.map((a) => a.schema);
    expect(new Set(roles).size).toBe(SERVICE_ACCESS.length);
    expect(new Set(schemas).size).toBe(SERVICE_ACCESS.length);
  });

  it('escapes regex metacharacters in names', () => {
    expect(regexLiteral('a.b*c')).toBe('a\\.b\\*c');
    expect(matches(`^${regexLiteral('orders.events')}$`, 'ordersXevents')).toBe(false);
  });

  it('puts the namespace after each anchor', () => {
    const perms = amqpPermissions(access('orders'), 'staging.');
    expect(matches(perms.write, 'staging.orders.events')).toBe(true);
    expect(matches(perms.write, 'staging.orders.charges.dlx')).toBe(true);
    expect(matches(perms.write, 'orders.events')).toBe(false);
    expect(matches(perms.write, 'staging.payments.events')).toBe(false);
    expect(matches(perms.read, 'staging.payments.events')).toBe(true);
    expect(matches(perms.read, 'staging.payments.eventsX')).toBe(false);
    expect(matches(perms.configure, 'staging.payments.events')).toBe(false);
  });

  it('grants nothing on the shared dead-letter exchange or the default exchange', () => {
    for (const a of SERVICE_ACCESS) {
      const perms = amqpPermissions(a);
      for (const right of ['configure', 'write', 'read'] as const) {
        expect({ service: a.service, right, dlx: matches(perms[right], 'dlx') }).toMatchObject({
          dlx: false,
        });
        expect(matches(perms[right], 'amq.default')).toBe(false);
      }
    }
    expect(amqpPermissions(access('gateway'))).toEqual({ configure: '^$', write: '^$', read: '^$' });
  });

  it('quotes role and schema names as SQL literals', () => {
    const sql = serviceRolesSql([{ schema: "we'ird", role: 'sa_x' }]);
    expect(sql).toContain("array[['we''ird', 'sa_x']]::text[]");
    expect(sql).not.toContain("'we'ird'");
  });
});
