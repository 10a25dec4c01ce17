import { FORBIDDEN_TARGET_CODE, ForbiddenTargetError, TARGET_NOT_ALLOWED } from '@seller-api/service-kit';
import { classifyOutcome, describeAttemptError, forbiddenTarget } from './delivery-outcome';

const S = 1000;
const schedule = [30 * S, 2 * 60 * S, 10 * 60 * S, 30 * 60 * S, 3600 * S, 7200 * S, 14400 * S];
const NOW = Date.parse('2026-11-26T08:00:00Z');
const policy = { schedule, now: NOW, random: () => 0 };
const answer = (status: number | null, retryAfter: string | null = null) => ({ status, retryAfter });

describe('classifyOutcome', () => {
  it('delivers on any 2xx, even on the last attempt', () => {
    for (const status of [200, 201, 204, 299]) {
      expect(classifyOutcome(answer(status), 1, 8, policy)).toEqual({ kind: 'delivered' });
    }
    expect(classifyOutcome(answer(200), 8, 8, policy)).toEqual({ kind: 'delivered' });
  });

  it('retries other statuses and no answer after the scheduled delay', () => {
    for (const status of [199, 300, 301, 400, 410, 500, 503, null]) {
      expect(classifyOutcome(answer(status), 1, 8, policy)).toEqual({ kind: 'retry', delayMs: 30 * S });
    }
    expect(classifyOutcome(answer(500), 3, 8, policy)).toEqual({ kind: 'retry', delayMs: 10 * 60 * S });
  });

  it('adds the jitter the random source gives', () => {
    expect(classifyOutcome(answer(500), 1, 8, { ...policy, random: () => 1 })).toEqual({
      kind: 'retry',
      delayMs: 36 * S,
    });
  });

  it('honours Retry-After between one and two times the scheduled delay', () => {
    expect(classifyOutcome(answer(429, '45'), 1, 8, policy)).toEqual({ kind: 'retry', delayMs: 45 * S });
    expect(classifyOutcome(answer(429, '3600'), 1, 8, policy)).toEqual({ kind: 'retry', delayMs: 60 * S });
    expect(classifyOutcome(answer(503, '1'), 1, 8, policy)).toEqual({ kind: 'retry', delayMs: 30 * S });
    expect(classifyOutcome(answer(503, 'soon'), 1, 8, policy)).toEqual({ kind: 'retry', delayMs: 30 * S });
    // An HTTP-date is read against `now`.
    const inFiftySeconds = new Date(NOW + 50 * S).toUTCString();
    expect(classifyOutcome(answer(503, inFiftySeconds), 1, 8, policy)).toEqual({
      kind: 'retry',
      delayMs: 50 * S,
    });
  });

  it('is dead once the attempts run out, whatever Retry-After says', () => {
    expect(classifyOutcome(answer(500), 8, 8, policy)).toEqual({ kind: 'dead' });
    expect(classifyOutcome(answer(null), 3, 3, policy)).toEqual({ kind: 'dead' });
    expect(classifyOutcome(answer(429, '10'), 8, 8, policy)).toEqual({ kind: 'dead' });
  });

  it('is dead after the schedule’s last attempt even when a resend allowed one more', () => {
    expect(classifyOutcome(answer(500), 8, 9, policy)).toEqual({ kind: 'dead' });
    expect(classifyOutcome(answer(500), 7, 9, policy)).toEqual({ kind: 'retry', delayMs: 14400 * S });
  });
});

describe('describeAttemptError', () => {
  it('names timeouts with the attempt timeout', () => {
    expect(describeAttemptError({ name: 'TimeoutError', message: 'x' }, 5000)).toBe('timeout after 5000 ms');
    expect(describeAttemptError({ code: 'UND_ERR_HEADERS_TIMEOUT' }, 5000)).toBe('timeout after 5000 ms');
    expect(describeAttemptError({ cause: { code: 'UND_ERR_BODY_TIMEOUT' } }, 10)).toBe('timeout after 10 ms');
  });

  it('says only that a refused target is not allowed', () => {
    expect(describeAttemptError({ code: FORBIDDEN_TARGET_CODE, message: '10.0.0.1' }, 1)).toBe(
      TARGET_NOT_ALLOWED,
    );
  });

  it('gives the code and message, without NUL characters, or "network error"', () => {
    expect(describeAttemptError({ code: 'ECONNREFUSED', message: 'connect failed' }, 1)).toBe(
      'ECONNREFUSED: connect failed',
    );
    expect(describeAttemptError({ cause: { code: 'ECONNRESET', message: 'a\u0000b' } }, 1)).toBe(
      'ECONNRESET: ab',
    );
    expect(describeAttemptError({}, 1)).toBe('network error');
  });
});

describe('forbiddenTarget', () => {
  it('finds the refusal itself or as the cause', () => {
    const refusal = new ForbiddenTargetError('internal.example', '10.0.0.1', 'private');
    expect(forbiddenTarget(refusal)).toBe(refusal);
    expect(forbiddenTarget({ cause: refusal })).toBe(refusal);
    expect(forbiddenTarget(new Error('other'))).toBeNull();
    expect(forbiddenTarget(null)).toBeNull();
  });
});
