import { z } from 'zod';
import { Environment, Role, uuid } from './common';

/** `mk_<env>_<token>`, token of at least 32 characters from [A-Za-z0-9] (docs/api.md). */
export const API_KEY_PATTERN = /^mk_(live|test)_[A-Za-z0-9]{32,}$/;

export const ApiKey = z.string().regex(API_KEY_PATTERN, { error: 'Invalid API key format' });
export type ApiKey = z.infer<typeof ApiKey>;

/** Environment named in a well-formed key, or null for anything else. */
export function apiKeyEnvironment(key: string): Environment | null {
  const match = API_KEY_PATTERN.exec(key);
  return match?.[1] === 'live' ? 'live' : match?.[1] === 'test' ? 'test' : null;
}

/**
 * Who is calling, as the gateway passes it (signed) to services. `seller_id` is null for an operator,
 * who works for the platform rather than for a seller.
 */
export const Identity = z.object({
  user_id: uuid,
  seller_id: uuid.nullable(),
  environment: Environment,
  role: Role,
  /** The seller's display name, for `parties.seller.name` and event payloads; absent for operators. */
  seller_name: z.string().nullable().optional(),
});
export type Identity = z.infer<typeof Identity>;
