import { json, startFakeUpstream } from '../support/fake-upstream';
import { call, createKey } from '../support/system';
import { useSystem } from '../support/use-system';

const t = useSystem({ gateway: false });

describe('graceful shutdown', () => {
  it('finishes a request in flight, refuses new connections and stops within the deadline', async () => {
    const upstream = await startFakeUpstream((_req, res) => {
      setTimeout(() => json(res, 200, { message: 'slow but fine' }), 500);
    });
    try {
      const gateway = await t.startGateway({ ORDERS_URL: upstream.url });
      const { key } = await createKey(gateway.service);
      const inFlight = call(`${gateway.url}/sellers/orders/`, { key });
      await new Promise<void>((resolve) => {
        const check = () => (upstream.received.length > 0 ? resolve() : setTimeout(check, 10));
        check();
      });
      const started = Date.now();
      const stopping = gateway.service.stop();
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(answer.body.message).toBe('slow but fine');
      await stopping;
      expect(Date.now() - started).toBeLessThan(10_000);
      await expect(fetch(`${gateway.url}/finance/balance/`)).rejects.toThrow();
    } finally {
      await upstream.close();
    }
  });
});
