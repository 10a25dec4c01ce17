/**
 * Queue names, in a module of their own without imports: the test suite's global setup loads it
 * straight from source to delete queues before the packages are built.
 */
export interface QueueNames {
  main: string;
  retry: string;
  dead: string;
}

/**
 * Physical names: `<namespace><name>.quorum`, with `.retry` and `.dead` after it. The `.quorum` is there
 * because these queues replaced classic queues of the plain names, and a queue's type cannot change in
 * place (classic-upgrade.ts empties and removes the old ones).
 */
export function queueNames(namespace: string, logical: string): QueueNames {
  const main = `${namespace}${logical}.quorum`;
  return { main, retry: `${main}.retry`, dead: `${main}.dead` };
}

/** The classic queues of earlier builds: `<namespace><name>`, `.retry`, `.dead`. */
export function classicQueueNames(namespace: string, logical: string): QueueNames {
  const main = `${namespace}${logical}`;
  return { main, retry: `${main}.retry`, dead: `${main}.dead` };
}
