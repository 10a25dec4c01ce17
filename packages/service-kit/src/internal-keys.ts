import { parseCallerKeys } from './config';
import type { CallKey, CallerKeys } from './identity';
import { deriveCallKey } from './identity';

/** The keys part of a service's configuration (config.ts commonEnv). */
export interface KeysConfig {
  INTERNAL_KEY?: string | undefined;
  INTERNAL_CALLER_KEYS?: string | undefined;
  INTERNAL_SECRET?: string | undefined;
  INTERNAL_SECRET_PREVIOUS?: string | undefined;
}

/**
 * What `caller` signs its calls to `callee` with: its INTERNAL_KEY derived for the callee, and while a
 * deployment is being upgraded, the callee's secret of the previous release (`legacySecret`, else the
 * caller's INTERNAL_SECRET) (docs/deploy.md, "Internal keys").
 */
export function callKeyOf(
  config: KeysConfig,
  caller: string,
  callee: string,
  legacySecret?: string | undefined,
): CallKey {
  if (!config.INTERNAL_KEY) throw new Error(`${caller} has no INTERNAL_KEY to sign its calls to ${callee}`);
  return {
    caller,
    callee,
    key: deriveCallKey(config.INTERNAL_KEY, callee),
    legacySecret: legacySecret ?? config.INTERNAL_SECRET,
  };
}

/** What `callee` verifies its callers with: INTERNAL_CALLER_KEYS, and the previous release's secrets. */
export function callerKeysOf(config: KeysConfig, callee: string): CallerKeys {
  return {
    callee,
    keys: config.INTERNAL_CALLER_KEYS ? parseCallerKeys(config.INTERNAL_CALLER_KEYS) : new Map(),
    legacySecrets: [config.INTERNAL_SECRET, config.INTERNAL_SECRET_PREVIOUS].filter(
      (s): s is string => typeof s === 'string',
    ),
  };
}
