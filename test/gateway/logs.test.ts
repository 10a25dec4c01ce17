import { randomUUID } from 'node:crypto';
import { LogCapture } from '../support/logs';
import { call, createKey, startSystem, type System } from '../support/system';

let system: System;
const logs = new LogCapture();

beforeAll(async () => {
  system = await startSystem({ LOG_LEVEL: 'trace' }, logs);
});
afterAll(() => system.stop());

describe('logs', () => {
  it('never contain API keys, even rejected ones or ones sent where they do not belong', async () => {
    const gateway = await system.startGateway({ LOG_LEVEL: 'trace' }, logs);
    const { key } = await createKey(gateway.service);
    const unknown = `mk_live_${'Z'.repeat(40)}`;
    await call(`${gateway.url}/finance/balance/`, { key });
    await call(`${gateway.url}/finance/balance/`, { key: unknown });
    await call(`${gateway.url}/finance/balance/?api_key=${key}`, {
      key,
      headers: { 'x-request-id': randomUUID() },
    });
    await call(`${gateway.url}/sellers/orders/`, { method: 'POST', key, rawBody: `{"oops": ${key}` });
    expect(logs.lines.length).toBeGreaterThan(0);
    expect(logs.text()).not.toContain(key);
    expect(logs.text()).not.toContain(unknown);
    expect(logs.text()).not.toContain(key.slice(8));
  });
});
