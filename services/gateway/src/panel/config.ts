import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

const bool = z
  .enum(['true', 'false'])
  .transform((v) => v === 'true')
  .optional();

/**
 * The copy the gateway's build puts in its own dist/public (what its image ships), else the panel's
 * build output in the repository (tests and `npm start` from sources).
 */
function defaultDistDir(): string {
  const beside = path.resolve(__dirname, '../public');
  if (fs.existsSync(path.join(beside, 'index.html'))) return beside;
  return path.resolve(__dirname, '../../../../packages/panel/dist');
}

/** The panel's part of the gateway's environment (merged into gatewayEnv). */
export const panelEnv = {
  /** Where the built panel is; the gateway serves it at `/`. */
  PANEL_DIST_DIR: z.string().default(defaultDistDir),
  /** Secure session cookie; unset means on everywhere except NODE_ENV=development and test (plain http). */
  PANEL_COOKIE_SECURE: bool,
  /** The origin browsers show for the panel (e.g. https://panel.example.com); unset: the request's own. */
  PANEL_ORIGIN: z.url().optional(),
  /** How long a login lasts, from the moment of logging in. */
  PANEL_SESSION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(8 * 3600),
  /** Failed and successful attempts per client IP and e-mail in 15 minutes before 429. */
  PANEL_LOGIN_ATTEMPTS: z.coerce.number().int().positive().default(5),
  /**
   * Failed attempts per e-mail before 429, counted twice: per client IP over an hour (that address is
   * locked out of the account for up to an hour), and from all IPs together over 15 minutes (a botnet
   * guessing one account gets no more than this per 15 minutes, and locks its owner out for 15 minutes
   * at most).
   */
  PANEL_LOGIN_ACCOUNT_ATTEMPTS: z.coerce.number().int().positive().default(20),
  /**
   * Password checks (32 MiB scrypt each, on libuv's threadpool of 4) running at once; below the pool's
   * size, so a login flood leaves threads for the DNS lookups of proxied requests.
   */
  PANEL_LOGIN_CONCURRENCY: z.coerce.number().int().positive().default(2),
  /** Logins waiting for a password check beyond those; more get 503 with Retry-After. */
  PANEL_LOGIN_QUEUE: z.coerce.number().int().nonnegative().default(8),
};
