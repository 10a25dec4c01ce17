import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import express from 'express';
import { mountHealth } from './health';

/** A health app on a free port, with one probe that counts its runs and can be made to fail. */
async function serve(cacheMs: number) {
  const state = { runs: 0, failing: false, shuttingDown: false };
  const app = express();
  mountHealth(
    app,
    {
      postgres: async () => {
        state.runs += 1;
        // A turn of the event loop, so that concurrent requests find the run under way.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (state.failing) throw new Error('down');
      },
    },
    () => state.shuttingDown,
    undefined,
    { cacheMs },
  );
  const server = await new Promise<http.Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ready = async () => {
    const res = await fetch(`${url}/readyz`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return { state, ready, close: () => server.close() };
}

describe('readiness', () => {
  it('runs the probes for every request without a cache', async () => {
    const h = await serve(0);
    try {
      for (let i = 0; i < 3; i += 1) expect((await h.ready()).status).toBe(200);
      expect(h.state.runs).toBe(3);
      h.state.failing = true;
      expect(await h.ready()).toMatchObject({ status: 503, body: { checks: { postgres: 'failing' } } });
    } finally {
      h.close();
    }
  });

  it('with a cache, runs the probes once for a flood of requests and answers the same result', async () => {
    const h = await serve(60_000);
    try {
      const answers = await Promise.all(Array.from({ length: 25 }, () => h.ready()));
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(h.state.runs).toBe(1);
      // A failure after the run is not seen until the window ends: no request runs the probes.
      h.state.failing = true;
      for (let i = 0; i < 5; i += 1) expect((await h.ready()).status).toBe(200);
      expect(h.state.runs).toBe(1);
      // Shutting down is never cached.
      h.state.shuttingDown = true;
      expect(await h.ready()).toMatchObject({ status: 503, body: { shutting_down: true } });
    } finally {
      h.close();
    }
  });

  it('runs the probes again once the window is over', async () => {
    const h = await serve(1);
    try {
      expect((await h.ready()).status).toBe(200);
      const first = h.state.runs;
      const later = Date.now() + 2;
      while (Date.now() < later) await new Promise((resolve) => setImmediate(resolve));
      h.state.failing = true;
      expect((await h.ready()).status).toBe(503);
      expect(h.state.runs).toBe(first + 1);
    } finally {
      h.close();
    }
  });
});
