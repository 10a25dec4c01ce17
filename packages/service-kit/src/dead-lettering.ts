import type { Message } from 'amqplib';

/**
 * A message that can never be handled, however often it is tried: no id, a body that is not JSON, an
 * event name the consumer does not know, a payload its contract refuses. The broker parks it in the
 * dead queue at once, for an operator, instead of acking it (which would drop it) or retrying it.
 */
export class UnprocessableMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnprocessableMessageError';
  }
}

interface DeathRecord {
  queue?: unknown;
  reason?: unknown;
  count?: unknown;
  'routing-keys'?: unknown;
}

function deaths(message: Message): DeathRecord[] {
  const value: unknown = message.properties.headers?.['x-death'];
  return Array.isArray(value) ? (value as DeathRecord[]) : [];
}

/** How often the message already failed in `queue` (dead-lettered from it by a nack). */
export function deathCount(message: Message, queue: string): number {
  return deaths(message)
    .filter((d) => d.queue === queue)
    .reduce((sum, d) => sum + Number(d.count ?? 0), 0);
}

/**
 * The event name: the routing key the publisher gave. Not the routing key it arrives with: a message
 * that went through a retry queue comes back with the key of the dead-lettering (the queue's own
 * name). Our publisher copies the name into the `type` property; without it, RabbitMQ's `x-death`
 * record of the first dead-lettering keeps the original keys. Null when neither says.
 */
export function messageName(message: Message): string | null {
  const type: unknown = message.properties.type;
  if (typeof type === 'string' && type !== '') return type;
  const records = deaths(message);
  if (records.length === 0) return message.fields.routingKey;
  const headers = message.properties.headers ?? {};
  const first =
    records.find(
      (d) => d.queue === headers['x-first-death-queue'] && d.reason === headers['x-first-death-reason'],
    ) ?? records[records.length - 1];
  const keys = first?.['routing-keys'];
  const key: unknown = Array.isArray(keys) ? keys[0] : undefined;
  return typeof key === 'string' && key !== '' ? key : null;
}
