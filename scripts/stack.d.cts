// Types of stack.cjs (the stack's one description; see there).

export type ServiceName = 'gateway' | 'orders' | 'payments' | 'withdrawals' | 'webhook-dispatcher';

export interface StackService {
  readonly name: ServiceName;
  /** Prefix of the root variables `npm start` reads: `<env>_PORT`, `<env>_METRICS_PORT`. */
  readonly env: string;
  readonly port: number;
  readonly metricsPort: number;
  /** The variable its callers find it by; null for the gateway, which nobody calls. */
  readonly urlVar: string | null;
  readonly callees: readonly ServiceName[];
  /** The compiled entry point, relative to the repository's root. */
  readonly main: string;
  /** Connection variables it needs besides its callees' URLs and the internal keys. */
  readonly needs: readonly string[];
}

export declare const SERVICES: readonly StackService[];
export declare const SERVICE_NAMES: readonly ServiceName[];
export declare function service(name: string): StackService;
export declare function callersOf(callee: string): ServiceName[];
export declare function calleeUrls(
  name: string,
  urlOf: (callee: ServiceName) => string,
): Record<string, string>;
export declare function serviceUrls(urlOf: (name: ServiceName) => string): Record<string, string>;
export declare function internalKeyEnv(
  name: string,
  keys: Partial<Record<ServiceName, string>>,
  derive: (callerKey: string, callee: string) => string,
): { INTERNAL_KEY?: string; INTERNAL_CALLER_KEYS?: string };
export declare function variablesOf(name: string): string[];
export declare function startWaves(): ServiceName[][];
