import type { Environment } from '@seller-api/contracts';
import { literalTargetRefusal } from '@seller-api/service-kit';
import { destinationOf } from '../../domain/destination';
import type { PostTarget } from './delivery-post';

/** A destination URL's parts, and why it cannot be posted to, per environment (null: it can). */
export interface DeliveryTarget extends PostTarget {
  hostname: string;
  /** Its scheme, host and port (domain/destination.ts): what its concurrency is counted against. */
  destination: string;
  refusal: Record<Environment, string | null>;
}

// Destination URLs whose parts are kept.
const TARGET_CACHE_SIZE = 10_000;

/**
 * Destination URLs taken apart once per destination, not once per attempt: a few webhooks' URLs serve
 * thousands of deliveries. The cache is dropped whole when it grows past TARGET_CACHE_SIZE.
 */
export class DeliveryTargets {
  private readonly targets = new Map<string, DeliveryTarget>();

  constructor(
    private readonly allowPrivateTargets: boolean,
    private readonly allowLoopbackTargets = false,
  ) {}

  of(url: string): DeliveryTarget {
    let target = this.targets.get(url);
    if (target) return target;
    try {
      const { origin, pathname, search, hostname } = new URL(url);
      // A literal IP never goes through the resolver (guardedLookup), so it is checked here.
      const refusal = (environment: Environment) =>
        literalTargetRefusal(hostname, {
          environment,
          allowPrivate: this.allowPrivateTargets,
          allowLoopback: this.allowLoopbackTargets,
        });
      target = {
        origin,
        path: `${pathname}${search}`,
        hostname,
        destination: destinationOf(url),
        refusal: { test: refusal('test'), live: refusal('live') },
      };
    } catch {
      target = {
        origin: '',
        path: '',
        hostname: '',
        destination: url,
        refusal: { test: 'invalid URL', live: 'invalid URL' },
      };
    }
    if (this.targets.size >= TARGET_CACHE_SIZE) this.targets.clear();
    this.targets.set(url, target);
    return target;
  }
}
