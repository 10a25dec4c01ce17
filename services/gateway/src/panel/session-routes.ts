import type { Router } from 'express';
import { PanelEnvironmentRequest, type PanelSessionResponse } from '@seller-api/contracts';
import { parseOrThrow } from '@seller-api/service-kit';
import { callerOf } from './caller';
import type { PanelContext } from './deps';
import { readJson } from './read-json';
import { clearedCookie, requireJson } from './security';
import type { Session } from './sessions';
import type { PanelUser } from '../db/users';

/** The logged-in session's own routes: logging out and switching environment. */
export function mountSessionRoutes(api: Router, { secure, sessions, spendUserBudget }: PanelContext): void {
  api.post('/logout', async (_req, res) => {
    await sessions.destroy(callerOf(res).session.token);
    res.set('Set-Cookie', clearedCookie(secure)).status(204).end();
  });

  api.post('/session/environment', async (req, res) => {
    requireJson(req);
    const { environment } = parseOrThrow(
      PanelEnvironmentRequest,
      await readJson(req),
      'Invalid environment.',
    );
    const caller = callerOf(res);
    const { session, user } = caller;
    await spendUserBudget(caller, res);
    res.json(
      presentSession('Environment changed.', await sessions.setEnvironment(session, environment), user),
    );
  });
}

export function presentSession(message: string, session: Session, user: PanelUser): PanelSessionResponse {
  return {
    message,
    data: {
      email: user.email,
      role: user.role,
      seller_name: user.seller_name,
      environment: session.environment,
      csrf_token: session.csrf_token,
      expires_at: new Date(session.expires_at).toISOString(),
    },
  };
}
