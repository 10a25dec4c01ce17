import { createMetrics } from '@seller-api/service-kit';
import { createPaymentMetrics } from './metrics';

describe('payment metrics', () => {
  it('counts due-date payments whose PSP amount differs from ours, per environment', async () => {
    const metrics = createMetrics('payments');
    const payments = createPaymentMetrics(metrics);
    payments.dueDateAmountDifference('live');
    payments.dueDateAmountDifference('live');
    payments.dueDateAmountDifference('test');
    const text = await metrics.registry.metrics();
    expect(text).toContain('# TYPE payments_due_date_amount_differences_total counter');
    expect(text).toMatch(/payments_due_date_amount_differences_total\{[^}]*environment="live"[^}]*\} 2/);
    expect(text).toMatch(/payments_due_date_amount_differences_total\{[^}]*environment="test"[^}]*\} 1/);
  });
});
