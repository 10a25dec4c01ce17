import type { Router } from 'express';
import { PanelLoginRequest, type CurrentSessionResponse } from '@seller-api/contracts';
import { HttpError, forbidden, parseOrThrow } from '@seller-api/service-kit';
import { currentCaller } from './caller';
import type { PanelContext } from './deps';
import { createLoginLimiters, refuseIfSpent, spendAll, type Budget } from './login-budgets';
import { readJson } from './read-json';
import { checkOrigin, readSessionCookie, requireJson, sessionCookie } from './security';
import { presentSession } from './session-routes';
import { findUserByEmail } from '../db/users';

const invalidCredentials = () => new HttpError(401, 'unauthorized', 'Invalid e-mail or password.');

/** The routes that need no session: logging in, and asking whether this browser is logged in. */
export function mountLoginRoutes(api: Router, ctx: PanelContext): void {
  const { deps, secure, sessions } = ctx;
  const { config } = deps;
  const { loginLimiter, ipLimiter, addressAccountLimiter, accountLimiter } = createLoginLimiters(
    deps.redis,
    config,
  );

  api.post('/login', async (req, res) => {
    checkOrigin(req, config.PANEL_ORIGIN);
    requireJson(req);
    const input = parseOrThrow(PanelLoginRequest, await readJson(req), 'Invalid login.');
    const ip = req.ip ?? 'unknown';
    const email = input.email.trim().toLowerCase();
    const attemptKey = `${ip}|${email}`;
    const budgets: Budget[] = [
      { limiter: loginLimiter, key: attemptKey },
      { limiter: addressAccountLimiter, key: attemptKey },
      { limiter: accountLimiter, key: email },
      { limiter: ipLimiter, key: ip },
    ];
    // Read before spending: an attempt refused by one budget uses up none of the others.
    await refuseIfSpent(budgets);
    const user = await findUserByEmail(deps.sql, email);
    // Spent once a password check is free: a login refused with 503 spends nothing.
    const ok = await deps.passwordChecks.verify(input.password, user?.password_hash ?? null, () =>
      spendAll(budgets),
    );
    // The account's budgets count failures only: the right password gives its points back.
    if (ok) {
      await Promise.all([
        accountLimiter.reward(email, 1).catch(() => undefined),
        addressAccountLimiter.reward(attemptKey, 1).catch(() => undefined),
      ]);
    }
    if (!user || !ok) {
      deps.logger.info({ ip }, 'panel login refused');
      throw invalidCredentials();
    }
    if (user.seller_status === 'SUSPENDED') throw forbidden('This seller account is suspended.');
    await loginLimiter.delete(attemptKey).catch(() => undefined);
    // A login replaces any session this browser had: the old token is deleted, not left to expire.
    const previous = readSessionCookie(req, secure);
    if (previous) await sessions.destroy(previous);
    const session = await sessions.create(user.id, user.role, 'test');
    deps.logger.info({ user_id: user.id }, 'panel login');
    res.set(
      'Set-Cookie',
      sessionCookie(session.token, { secure, ttlSeconds: config.PANEL_SESSION_TTL_SECONDS }),
    );
    res.json(presentSession('Logged in.', session, user));
  });

  api.get('/session', async (req, res) => {
    const caller = await currentCaller(ctx, req);
    const body: CurrentSessionResponse = caller
      ? presentSession('Session retrieved.', caller.session, caller.user)
      : { message: 'Not logged in.', data: null };
    res.json(body);
  });
}
