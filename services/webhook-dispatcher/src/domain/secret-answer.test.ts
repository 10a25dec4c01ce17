import { randomBytes } from 'node:crypto';
import { sealedSecretAnswer } from './secret-answer';
import { SecretBox } from './secret-box';

const box = new SecretBox(randomBytes(32));
const codec = sealedSecretAnswer(box);
const answer = JSON.stringify({
  message: 'Webhook registered. Store the secret now: it is not shown again.',
  data: {
    id: '5b0e4a0c-3f7e-4c52-9a8b-1f2d3c4b5a69',
    url: 'https://example.com/hooks?secret=no',
    event: 'order.paid',
    description: 'a "secret" in the description',
    status: 'ACTIVE',
    secret: 'whsec_Jc3c5v0n6m8HkqVb1Yl2dQ4oF7tR9wXz$&0sE3gK5uP8=',
    created_at: '2025-06-15T12:00:00.000Z',
  },
});

describe('sealedSecretAnswer', () => {
  it('stores the answer with its secret sealed, and gives back the very same text', () => {
    const stored = codec.toStored(answer);
    expect(stored).not.toContain('whsec_');
    expect(JSON.parse(stored)).toMatchObject({
      data: { id: '5b0e4a0c-3f7e-4c52-9a8b-1f2d3c4b5a69', secret: expect.stringMatching(/^v1:/) },
    });
    expect(codec.fromStored(stored)).toBe(answer);
  });

  it('seals under the answer context: the stored secret does not open as the webhook row', () => {
    const { data } = JSON.parse(codec.toStored(answer)) as { data: { id: string; secret: string } };
    expect(() => box.open(data.secret, data.id)).toThrow();
  });

  it('leaves an answer without a secret as it is', () => {
    const other = JSON.stringify({ message: 'ok', data: { id: 'x' } });
    expect(codec.toStored(other)).toBe(other);
    expect(codec.fromStored(other)).toBe(other);
    expect(codec.toStored('not json')).toBe('not json');
  });
});
