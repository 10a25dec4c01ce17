import type { Browser } from 'playwright-core';
import type pino from 'pino';
import { Client } from 'pg';
import type { Environment, Role } from '@seller-api/contracts';
import type { Resolver } from '@seller-api/service-kit';
import { ensurePanelBuilt } from '../panel/build';
import { captureEvents } from './events';
import type { PspSimulator, PspSimulatorOptions } from './psp-simulator';
import { startReceiver, type Receiver, type Responder } from './receiver';
import { call, createKey, startSystem, type RunningGateway, type System } from './system';

/* eslint-disable @typescript-eslint/no-require-imports -- loaded by the files that ask for them only:
   playwright and the PSP simulator would add to every other file's start. */
const lazy = {
  browser: () => require('../panel/browser') as typeof import('../panel/browser'),
  psp: () => require('./psp-simulator') as typeof import('./psp-simulator'),
};
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * One test file's system (README.md, "Running the tests"): what the file asks for is started in a
 * beforeAll and stopped in an afterAll, and the handles are read inside its tests and hooks.
 *
 *   const t = useSystem({ receiver: true });
 *   it('delivers order.created', async () => {
 *     await register(t.url, t.seller.key, `${t.receiver.url}/created`);
 *     ...
 *   });
 *
 * Each file still starts its own services (jest gives each file its own modules); only the set-up is
 * shared.
 */
export interface UseSystemOptions {
  /** Variables of every service, the gateways' included (startSystem's overrides). */
  env?: Record<string, string> | ((started: { psp: PspSimulator }) => Record<string, string>);
  /**
   * The gateway's own variables (a function when they name something the file starts in an earlier
   * beforeAll); `false` starts none (a file that calls services directly or starts its own).
   */
  gateway?: Record<string, string> | (() => Record<string, string>) | false;
  /** Where the services' and gateways' logs go (a LogCapture), instead of nowhere. */
  logs?: pino.DestinationStream;
  /** A seller with a `test` and a `live` key on one user (`t.seller`). */
  seller?: boolean;
  /** The webhook receiver (`t.receiver`); routes given here answer for the whole file. */
  receiver?: boolean | { routes: Record<string, Responder> };
  /** A connection to the file's database (`t.db`), for what a test reads or breaks there directly. */
  db?: boolean;
  /** A PSP simulator started before the services (`t.psp`); `env` can read it to point payments at it. */
  psp?: PspSimulatorOptions;
  /** The panel built if it is stale and a headless Chromium (`t.browser`, `t.origin`). */
  browser?: boolean;
  /** startSystem's options: a proxy in front of payments, the dispatcher's resolver, separate keys. */
  wrapPayments?: (url: string) => Promise<string>;
  resolve?: Resolver;
  separateKeys?: boolean;
}

export interface Seller {
  /** The seller's `test` key. */
  key: string;
  /** The same user's `live` key. */
  liveKey: string;
  userId: string;
  sellerId: string;
  email: string;
}

type CallOptions = NonNullable<Parameters<typeof call>[1]>;

export interface SystemHandles {
  system: System;
  env: NodeJS.ProcessEnv;
  /** The gateway started with the system, and its public API's base URL (`.../api/v1`). */
  gateway: RunningGateway;
  url: string;
  /** The panel's origin on that gateway (with `browser`, or for panel calls). */
  origin: string;
  seller: Seller;
  receiver: Receiver;
  psp: PspSimulator;
  browser: Browser;
  db: Client;
  /** A request to the gateway's API: `path` from `/api/v1` on. */
  api(path: string, options?: CallOptions): ReturnType<typeof call>;
  /** A new user (a seller unless `role` says) with a new key, as the CLI makes them. */
  newKey(options?: {
    email?: string;
    environment?: Environment;
    role?: Role;
    label?: string;
  }): ReturnType<typeof createKey>;
  /** Another gateway replica on the same services, stopped with the system. */
  startGateway: System['startGateway'];
  /** Captures a service's events from now until the file ends. */
  captureEvents(exchange: string, pattern?: string): ReturnType<typeof captureEvents>;
  /** Work to undo before the system stops (last registered, first run). */
  cleanup(work: () => Promise<unknown> | unknown): void;
}

/** Registers the file's beforeAll and afterAll, and answers the handles they fill in. */
export function useSystem(options: UseSystemOptions = {}): SystemHandles {
  let system: System | undefined;
  let gateway: RunningGateway | undefined;
  let seller: Seller | undefined;
  let receiver: Receiver | undefined;
  let psp: PspSimulator | undefined;
  let browser: Browser | undefined;
  let db: Client | undefined;
  const cleanups: Array<() => Promise<unknown> | unknown> = [];

  const started = <T>(value: T | undefined, what: string, option: string): T => {
    if (value === undefined) {
      throw new Error(
        system
          ? `useSystem: no ${what} in this file (ask for it with the option \`${option}\`)`
          : `useSystem: the system is not started yet (read ${what} inside a test or a hook)`,
      );
    }
    return value;
  };
  const theGateway = () => started(gateway, 'gateway', 'gateway');

  beforeAll(
    async () => {
      if (options.browser) await ensurePanelBuilt();
      if (options.psp) psp = await lazy.psp().startPspSimulator(options.psp);
      const env =
        typeof options.env === 'function'
          ? options.env({
              get psp() {
                return started(psp, 'PSP simulator', 'psp');
              },
            })
          : options.env;
      system = await startSystem(env, options.logs, {
        wrapPayments: options.wrapPayments,
        resolve: options.resolve,
        separateKeys: options.separateKeys,
      });
      // Each is kept as soon as it is up, so that afterAll closes it even if another failed to start.
      const [main] = await Promise.all([
        options.gateway === false
          ? undefined
          : system.startGateway(typeof options.gateway === 'function' ? options.gateway() : options.gateway),
        options.receiver ? startReceiver().then((started) => (receiver = started)) : undefined,
        options.browser
          ? lazy
              .browser()
              .launchChromium()
              .then((started) => (browser = started))
          : undefined,
      ]);
      if (options.db) {
        db = new Client({ connectionString: system.env.DATABASE_URL });
        await db.connect();
      }
      gateway = main;
      if (receiver && typeof options.receiver === 'object') {
        for (const [path, responder] of Object.entries(options.receiver.routes))
          receiver.route(path, responder);
      }
      if (options.seller) {
        const made = await createKey(theGateway().service);
        const live = await createKey(theGateway().service, { email: made.email, environment: 'live' });
        seller = {
          key: made.key,
          liveKey: live.key,
          userId: made.userId,
          sellerId: made.sellerId as string,
          email: made.email,
        };
      }
    },
    // Building the panel and launching Chromium take longer than a test.
    options.browser ? 180_000 : 60_000,
  );

  afterAll(async () => {
    // Every step runs whatever an earlier one threw: a file's failed clean-up must not leave its
    // services running (they share the machine's databases and queues with the next files).
    const failures: unknown[] = [];
    const step = async (work: () => Promise<unknown> | unknown) => {
      try {
        await work();
      } catch (err) {
        failures.push(err);
      }
    };
    for (const work of cleanups.reverse()) await step(work);
    await step(() => browser?.close());
    await step(() => receiver?.close());
    await step(() => db?.end());
    await step(() => system?.stop());
    await step(() => psp?.close());
    if (failures.length > 0) throw failures[0];
  });

  return {
    get system() {
      return started(system, 'system', 'useSystem');
    },
    get env() {
      return started(system, 'system', 'useSystem').env;
    },
    get gateway() {
      return theGateway();
    },
    get url() {
      return theGateway().url;
    },
    get origin() {
      return new URL(theGateway().url).origin;
    },
    get seller() {
      return started(seller, 'seller', 'seller');
    },
    get receiver() {
      return started(receiver, 'receiver', 'receiver');
    },
    get psp() {
      return started(psp, 'PSP simulator', 'psp');
    },
    get browser() {
      return started(browser, 'browser', 'browser');
    },
    get db() {
      return started(db, 'database connection', 'db');
    },
    api: (path, callOptions) => call(`${theGateway().url}${path}`, callOptions),
    newKey: (keyOptions) => createKey(theGateway().service, keyOptions),
    startGateway: (...args) => started(system, 'system', 'useSystem').startGateway(...args),
    async captureEvents(exchange, pattern) {
      const env = started(system, 'system', 'useSystem').env;
      const capture = await captureEvents(
        env.AMQP_URL as string,
        env.AMQP_NAMESPACE as string,
        exchange,
        pattern,
      );
      cleanups.push(() => capture.close());
      return capture;
    },
    cleanup(work) {
      cleanups.push(work);
    },
  };
}
