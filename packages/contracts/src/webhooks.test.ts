import { zodIssuesToFieldErrors } from './errors';
import { BulkResendRequest, CreateWebhookRequest, DeliveryListQuery, UpdateWebhookRequest } from './webhooks';

describe('webhook bodies', () => {
  it('registers one known event at an http(s) URL', () => {
    expect(CreateWebhookRequest.parse({ url: 'https://example.com/hook', event: 'order.paid' })).toEqual({
      url: 'https://example.com/hook',
      event: 'order.paid',
    });
    const result = CreateWebhookRequest.safeParse({ url: 'javascript:alert(1)', event: 'order.unknown' });
    if (result.success) throw new Error('expected failure');
    expect(Object.keys(zodIssuesToFieldErrors(result.error)).sort()).toEqual(['event', 'url']);
  });

  it('pauses or resumes with PATCH, refusing an empty body on non_field_errors', () => {
    expect(UpdateWebhookRequest.parse({ status: 'DISABLED' })).toEqual({ status: 'DISABLED' });
    const result = UpdateWebhookRequest.safeParse({});
    if (result.success) throw new Error('expected failure');
    expect(Object.keys(zodIssuesToFieldErrors(result.error))).toEqual(['non_field_errors']);
  });

  it('filters deliveries by lower-case status', () => {
    expect(DeliveryListQuery.parse({ status: 'dead' })).toEqual({ status: 'dead', limit: 20 });
    expect(DeliveryListQuery.safeParse({ status: 'DEAD' }).success).toBe(false);
  });

  it('bulk-resends dead deliveries only, within an ordered window', () => {
    expect(BulkResendRequest.safeParse({ status: 'dead', since: '2026-01-01T00:00:00Z' }).success).toBe(true);
    expect(BulkResendRequest.safeParse({ status: 'pending' }).success).toBe(false);
    const result = BulkResendRequest.safeParse({
      status: 'dead',
      since: '2026-02-01T00:00:00Z',
      until: '2026-01-01T00:00:00Z',
    });
    if (result.success) throw new Error('expected failure');
    expect(Object.keys(zodIssuesToFieldErrors(result.error))).toEqual(['until']);
  });
});
