import {
  MAX_REFUND_ATTEMPTS,
  attemptOfRefundId,
  decideRefund,
  nextCheckDelay,
  reasonText,
  refundIdFor,
  refundRefusal,
  refundView,
  type RefundFields,
} from './refund-state';

const TX = '282c4123-0a8d-4e04-9a59-b50fcf3d0b8e';
const asked: RefundFields = {
  chargeStatus: 'PAID',
  refundStatus: null,
  refundAttempt: 1,
  refundAskedAt: new Date('2026-11-28T10:00:00Z'),
};

describe('refund ids', () => {
  it('keeps the first attempt as earlier releases asked it, and numbers the next ones', () => {
    expect(refundIdFor(TX, 1)).toBe('D282c41230a8d4e049a59b50fcf3d0b8e');
    expect(refundIdFor(TX, 0)).toBe(refundIdFor(TX, 1));
    expect(refundIdFor(TX, 2)).toBe('D282c41230a8d4e049a59b50fcf3d0b8e02');
    expect(refundIdFor(TX, MAX_REFUND_ATTEMPTS)).toMatch(/^[A-Za-z0-9]{35}$/);
    expect(() => refundIdFor(TX, MAX_REFUND_ATTEMPTS + 1)).toThrow();
  });

  it('reads the attempt back from an id, and nothing from another transaction or a late payment', () => {
    for (const attempt of [1, 2, 10, MAX_REFUND_ATTEMPTS])
      expect(attemptOfRefundId(TX, refundIdFor(TX, attempt))).toBe(attempt);
    expect(attemptOfRefundId(TX, 'D282c41230a8d4e049a59b50fcf3d0b8e01')).toBeNull();
    expect(attemptOfRefundId(TX, 'D282c41230a8d4e049a59b50fcf3d0b8eAB')).toBeNull();
    expect(attemptOfRefundId(TX, `L${'E'.repeat(32)}`.slice(0, 35))).toBeNull();
    expect(attemptOfRefundId('00000000-0000-4000-8000-000000000000', refundIdFor(TX, 1))).toBeNull();
  });
});

describe('decideRefund', () => {
  it('moves an unknown or processing refund to its end, once', () => {
    expect(decideRefund(asked, { attempt: 1, status: 'PROCESSING' })).toEqual({ kind: 'processing' });
    expect(decideRefund(asked, { attempt: 1, status: 'REFUNDED' })).toEqual({ kind: 'refunded' });
    expect(decideRefund(asked, { attempt: 1, status: 'FAILED' })).toEqual({ kind: 'failed' });
    const processing = { ...asked, refundStatus: 'PROCESSING' as const };
    expect(decideRefund(processing, { attempt: 1, status: 'PROCESSING' }).kind).toBe('none');
    expect(decideRefund(processing, { attempt: 1, status: 'REFUNDED' }).kind).toBe('refunded');
  });

  it('ignores a report after the end, out of order, or of another attempt', () => {
    for (const end of ['REFUNDED', 'FAILED'] as const) {
      const ended = { ...asked, refundStatus: end };
      for (const status of ['PROCESSING', 'REFUNDED', 'FAILED'] as const)
        expect(decideRefund(ended, { attempt: 1, status }).kind).toBe('none');
    }
    const second = { ...asked, refundAttempt: 2 };
    expect(decideRefund(second, { attempt: 1, status: 'FAILED' }).kind).toBe('none');
    expect(decideRefund(second, { attempt: 2, status: 'FAILED' }).kind).toBe('failed');
    expect(decideRefund({ ...asked, refundAskedAt: null }, { attempt: 1, status: 'REFUNDED' }).kind).toBe(
      'none',
    );
  });

  it('lets the end of a refund count on a charge a MED or chargeback moved, but nothing else', () => {
    expect(decideRefund({ ...asked, chargeStatus: 'MED' }, { attempt: 1, status: 'REFUNDED' }).kind).toBe(
      'refunded',
    );
    expect(
      decideRefund({ ...asked, chargeStatus: 'CHARGEBACK' }, { attempt: 1, status: 'FAILED' }).kind,
    ).toBe('none');
  });
});

describe('refundRefusal', () => {
  it('refuses a refund while one is in progress, and past the last attempt', () => {
    expect(refundRefusal({ refundStatus: 'PROCESSING', refundAttempt: 1 })).toMatch(/already in progress/);
    expect(refundRefusal({ refundStatus: 'FAILED', refundAttempt: 3 })).toBeNull();
    expect(refundRefusal({ refundStatus: 'FAILED', refundAttempt: MAX_REFUND_ATTEMPTS })).toMatch(
      /contact support/,
    );
    expect(refundRefusal({ refundStatus: null, refundAttempt: 1 })).toBeNull();
  });
});

describe('nextCheckDelay', () => {
  it('doubles from the base up to the cap, with at most 10 % of jitter', () => {
    expect([0, 1, 2, 3].map((n) => nextCheckDelay(n, 1000, 5000, () => 0))).toEqual([1000, 2000, 4000, 5000]);
    expect(nextCheckDelay(100, 1000, 5000, () => 0)).toBe(5000);
    expect(nextCheckDelay(0, 1000, 5000, () => 0.999)).toBeLessThanOrEqual(1100);
  });
});

describe('refundView', () => {
  const row = {
    refundStatus: 'FAILED' as const,
    refundAttempt: 2,
    grossAmount: 1013,
    refundRequestedAt: new Date('2026-11-28T10:00:00Z'),
    refundAskedAt: new Date('2026-11-28T10:00:01Z'),
    refundUpdatedAt: new Date('2026-11-28T10:05:00Z'),
    refundReason: 'Conta encerrada.',
    refundHoldSeq: 7,
  };
  it('shows the latest attempt with its reason, and nothing before an outcome', () => {
    expect(refundView(row)).toEqual({
      status: 'FAILED',
      attempt: 2,
      amount: 1013,
      requested_at: '2026-11-28T10:00:00.000Z',
      updated_at: '2026-11-28T10:05:00.000Z',
      failure_reason: 'Conta encerrada.',
      hold_seq: 7,
    });
    expect(refundView({ ...row, refundStatus: 'PROCESSING' })).toMatchObject({
      failure_reason: null,
      hold_seq: 7,
    });
    expect(refundView({ ...row, refundStatus: null })).toBeNull();
  });
});

describe('reasonText', () => {
  it('keeps the PSP reason on one line, at most 140 characters, never half an emoji', () => {
    expect(reasonText('  Conta\n encerrada. ')).toBe('Conta encerrada.');
    expect(reasonText('')).toBeNull();
    expect(reasonText(null)).toBeNull();
    const long = `${'a'.repeat(139)}😀😀`;
    expect(Array.from(reasonText(long) as string)).toHaveLength(140);
    expect(reasonText(long)?.endsWith('😀')).toBe(true);
  });

  it("masks the personal data a PSP's reason quotes, before the cut, and leaves its ids readable", () => {
    expect(
      reasonText('Chave maria.souza@example.com.br, +55 11 98765-4321 e CPF 123 456 789 09: conta encerrada'),
    ).toBe('Chave m***@example.com.br, +55*********21 e CPF 123.***.***-09: conta encerrada');
    // A CPF that the cut at 140 would leave in part is masked whole first.
    const cut = reasonText(`${'a'.repeat(130)} 529.982.247-25`) as string;
    expect(cut).not.toMatch(/982|247/);
    expect(reasonText('Devolução D12345678202611281300123456789a negada')).toBe(
      'Devolução D12345678202611281300123456789a negada',
    );
  });
});
