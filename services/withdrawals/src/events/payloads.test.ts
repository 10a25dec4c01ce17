import { WithdrawalEventData, WithdrawalReasonEventData } from '@seller-api/contracts';
import type { WithdrawalRow } from '../db/entities';
import { withdrawalEventData } from './payloads';

function row(overrides: Partial<WithdrawalRow> = {}): WithdrawalRow {
  return {
    id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    sellerId: '11111111-1111-4111-8111-111111111111',
    environment: 'test',
    sellerName: 'Loja Exemplo',
    amount: 50000,
    pixKey: '7d9f2c1a-4b3e-4f6a-9c2d-1e8b5a3f6d40',
    pixKeyType: 'random',
    status: 'PAID',
    createdAt: new Date('2025-06-21T12:00:00.000Z'),
    decidedAt: new Date('2025-06-21T12:30:05.300Z'),
    decidedBy: 'operator',
    denyReason: null,
    processingAt: null,
    payoutAttempts: 1,
    payoutReference: null,
    paidAt: new Date('2025-06-21T12:30:08.150Z'),
    failedAt: null,
    failureReason: null,
    autoApprovable: false,
    reviewReasons: [],
    canceledAt: null,
    canceledBy: null,
    cancelReason: null,
    ...overrides,
  };
}

describe('withdrawal event payloads', () => {
  it('is withdrawal.paid exactly as documented, with the key masked', () => {
    const data = withdrawalEventData('withdrawal.paid', row());
    expect(data).toEqual({
      withdrawal: {
        uuid: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
        status: 'PAID',
        gross_amount: 50000,
        requested_at: '2025-06-21T12:00:00.000Z',
        decided_at: '2025-06-21T12:30:05.300Z',
      },
      bank_data: { pix_key: '7d9f****************************6d40', pix_key_type: 'random' },
      seller: { name: 'Loja Exemplo' },
    });
    expect(WithdrawalEventData.strict().safeParse(data).success).toBe(true);
  });

  it.each([
    ['email', 'fail@example.com', 'fai*@example.com'],
    ['cpf', '52998224725', '529.***.***-25'],
    ['phone', '+5511987654321', '+5511*****4321'],
  ] as const)('masks a %s key', (type, key, masked) => {
    const data = withdrawalEventData('withdrawal.requested', row({ pixKeyType: type, pixKey: key }));
    expect(data.bank_data).toEqual({ pix_key: masked, pix_key_type: type });
    expect(JSON.stringify(data)).not.toContain(key);
  });

  it('adds the reason to denied, failed and canceled, and only to them', () => {
    const canceled = withdrawalEventData(
      'withdrawal.canceled',
      row({ status: 'CANCELED', cancelReason: 'Fraud suspected.' }),
    );
    expect(WithdrawalReasonEventData.parse(canceled).withdrawal).toMatchObject({
      status: 'CANCELED',
      reason: 'Fraud suspected.',
    });
    const denied = withdrawalEventData('withdrawal.denied', row({ status: 'DENIED', denyReason: 'No.' }));
    expect(WithdrawalReasonEventData.parse(denied).withdrawal.reason).toBe('No.');
    const failed = withdrawalEventData('withdrawal.failed', row({ status: 'FAILED', failureReason: null }));
    expect(WithdrawalReasonEventData.parse(failed).withdrawal.reason).toBeNull();
    expect(withdrawalEventData('withdrawal.approved', row()).withdrawal).not.toHaveProperty('reason');
  });

  it('shows decided_at null while PENDING', () => {
    const data = withdrawalEventData('withdrawal.requested', row({ status: 'PENDING', decidedAt: null }));
    expect(data.withdrawal.decided_at).toBeNull();
  });
});
