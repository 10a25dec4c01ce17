import {
  callKeyOf,
  callerKeysOf,
  devCallerKeys,
  devInternalKey,
  type CallKey,
  type CallerKeys,
} from '@seller-api/service-kit';

/**
 * What a service signs its calls to another with in tests: the development keys every service
 * defaults to outside production (kit config.ts), so a test plays any caller (docs/deploy.md,
 * "Internal keys").
 */
export function callKey(caller: string, callee: string, legacySecret?: string): CallKey {
  return callKeyOf({ INTERNAL_KEY: devInternalKey(caller) }, caller, callee, legacySecret);
}

/** The gateway's key for one service: what a test calling a service directly signs with. */
export const gatewayKey = (callee: string): CallKey => callKey('gateway', callee);

/** What `callee` verifies with in tests: every service's development key, derived for it. */
export const callerKeys = (callee: string): CallerKeys =>
  callerKeysOf({ INTERNAL_CALLER_KEYS: devCallerKeys(callee) }, callee);
