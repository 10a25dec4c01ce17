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

/**
 * `/healthz`: the process answers. `/readyz`: every dependency answers within a second, and the service
 * is not shutting down; the body names what failed, never how (no connection strings).
 */
export function mountHealth(
  app: Express,
  probes: Record<string, Probe>,
  isShuttingDown: () => boolean,
  onChecked?: (check: string, ok: boolean) => void,
): void {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks: Record<string, 'ok' | 'failing'> = {};
    await Promise.all(
      Object.entries(probes).map(async ([name, probe]) => {
        checks[name] = await withTimeout(probe, 1_000).then(
          () => 'ok' as const,
          () => 'failing' as const,
        );
      }),
    );
    for (const [name, result] of Object.entries(checks)) onChecked?.(name, result === 'ok');
    const ready = !isShuttingDown() && Object.values(checks).every((c) => c === 'ok');
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? 'ready' : 'not_ready', checks, shutting_down: isShuttingDown() });
  });
}
