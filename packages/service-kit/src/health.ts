import type { Express } from 'express';

export type Probe = () => Promise<void>;

async function withTimeout(probe: Probe, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

type Checks = Record<string, 'ok' | 'failing'>;

export interface HealthOptions {
  /**
   * How long one run of the probes answers `/readyz` (0: a run per request). A port anyone can reach
   * (the gateway's) sets it, so a flood of `/readyz` costs at most one run of the probes per window; the
   * requests that arrive while a run is under way share it.
   */
  cacheMs?: number;
}

/** Runs the probes, or answers a run younger than `cacheMs` (or the one under way). */
function readinessChecks(
  probes: Record<string, Probe>,
  onChecked: ((check: string, ok: boolean) => void) | undefined,
  cacheMs: number,
): () => Promise<Checks> {
  let last: { at: number; checks: Checks } | null = null;
  let running: Promise<Checks> | null = null;
  const run = async (): Promise<Checks> => {
    const checks: Checks = {};
    await Promise.all(
      Object.entries(probes).map(async ([name, probe]) => {
        checks[name] = await withTimeout(probe, 1_000).then(
          () => 'ok' as const,
          () => 'failing' as const,
        );
      }),
    );
    for (const [name, result] of Object.entries(checks)) onChecked?.(name, result === 'ok');
    return checks;
  };
  return () => {
    if (last && Date.now() - last.at < cacheMs) return Promise.resolve(last.checks);
    running ??= run().then((checks) => {
      last = { at: Date.now(), checks };
      running = null;
      return checks;
    });
    return running;
  };
}

/**
 * `/healthz`: the process answers. `/readyz`: every dependency answers within a second, and the service
 * is not shutting down; the body names what failed, never how (no connection strings).
 */
export function mountHealth(
  app: Express,
  probes: Record<string, Probe>,
  isShuttingDown: () => boolean,
  onChecked?: (check: string, ok: boolean) => void,
  options: HealthOptions = {},
): void {
  const readiness = readinessChecks(probes, onChecked, options.cacheMs ?? 0);
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks = await readiness();
    // Shutting down is read now, never from the cache: the load balancer must see it at once.
    const ready = !isShuttingDown() && Object.values(checks).every((c) => c === 'ok');
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? 'ready' : 'not_ready', checks, shutting_down: isShuttingDown() });
  });
}
