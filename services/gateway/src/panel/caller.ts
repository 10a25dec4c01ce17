import type { NextFunction, Request, Response } from 'express';
import type { Identity } from '@seller-api/contracts';
import { unauthorized } from '@seller-api/service-kit';
import type { PanelContext } from './deps';
import { checkCsrfToken, checkOrigin, readSessionCookie } from './security';
import type { Session } from './sessions';
import { findUserById, type PanelUser } from '../db/users';

export interface Caller {
  session: Session;
  user: PanelUser;
}

/** The live session of this request and its user, or null (a stale session is deleted). */
export async function currentCaller(
  { deps, secure, sessions }: PanelContext,
  req: Request,
): Promise<Caller | null> {
  const token = readSessionCookie(req, secure);
  const session = token ? await sessions.find(token) : null;
  if (!session) return null;
  const user = await findUserById(deps.sql, session.user_id);
  if (!user || user.role !== session.role) {
    await sessions.destroy(session.token);
    return null;
  }
  return { session, user };
}

/** Every route after it needs a live session; every change needs the session's CSRF token too. */
export function requireSession(ctx: PanelContext) {
  const { config } = ctx.deps;
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const caller = await currentCaller(ctx, req);
    if (!caller) throw unauthorized('Log in to use the panel.');
    if (!['GET', 'HEAD'].includes(req.method)) {
      checkOrigin(req, config.PANEL_ORIGIN);
      checkCsrfToken(req, caller.session.csrf_token);
    }
    res.locals.caller = caller;
    next();
  };
}

export function callerOf(res: Response): Caller {
  const caller = res.locals.caller as Caller | undefined;
  if (!caller) throw unauthorized('Log in to use the panel.');
  return caller;
}

export function identityOf({ session, user }: Caller): Identity {
  return {
    user_id: user.id,
    seller_id: user.seller_id,
    environment: session.environment,
    role: user.role,
    seller_name: user.seller_name,
  };
}
