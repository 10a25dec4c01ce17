import type { Message } from 'amqplib';
import { deathCount, messageName } from './dead-lettering';

/** A delivered message; headers as the broker may write them, whatever amqplib's types expect. */
function message(
  routingKey: string,
  properties: { type?: string; headers?: Record<string, unknown> } = {},
): Message {
  return {
    content: Buffer.from('{}'),
    fields: { deliveryTag: 1, redelivered: false, exchange: 'ex', routingKey },
    properties: { headers: {}, ...properties } as unknown as Message['properties'],
  };
}

// What RabbitMQ writes after two trips through a retry queue: newest record first.
const xDeath = [
  {
    count: 2,
    queue: 'ns.ledger.quorum.retry',
    reason: 'expired',
    'routing-keys': ['ns.ledger.quorum.retry'],
  },
  { count: 2, queue: 'ns.ledger.quorum', reason: 'rejected', 'routing-keys': ['payment.approved'] },
];
const retried = {
  'x-death': xDeath,
  'x-first-death-queue': 'ns.ledger.quorum',
  'x-first-death-reason': 'rejected',
};

describe('messageName', () => {
  it('is the publisher’s type when it set one', () => {
    expect(messageName(message('ns.ledger.quorum', { type: 'payment.approved', headers: retried }))).toBe(
      'payment.approved',
    );
  });

  it('is the routing key of a message that never died', () => {
    expect(messageName(message('payment.approved'))).toBe('payment.approved');
  });

  it('is the key of the first dead-lettering when a retried message has no type', () => {
    expect(messageName(message('ns.ledger.quorum', { headers: retried }))).toBe('payment.approved');
  });

  it('is null for a retried message whose records keep no key', () => {
    const headers = { 'x-death': [{ count: 1, queue: 'ns.ledger.quorum', reason: 'rejected' }] };
    expect(messageName(message('ns.ledger.quorum', { headers }))).toBeNull();
  });
});

describe('deathCount', () => {
  it('counts the rejections in one queue only', () => {
    expect(deathCount(message('k', { headers: retried }), 'ns.ledger.quorum')).toBe(2);
    expect(deathCount(message('k', { headers: retried }), 'ns.other.quorum')).toBe(0);
    expect(deathCount(message('k'), 'ns.ledger.quorum')).toBe(0);
  });
});
