import { hostIs, matchRoute, routeTemplate } from './routing';

describe('routing table', () => {
  it.each([
    ['/sellers/orders/', 'orders'],
    ['/sellers/orders', 'orders'],
    ['/sandbox/orders/abc/pay/', 'orders'],
    ['/finance/balance/', 'withdrawals'],
    ['/ops/withdrawals/abc/approve/', 'withdrawals'],
    ['/config/webhooks/', 'webhooks'],
    ['/psp/webhook/pix', 'payments'],
  ])('sends %s to %s', (path, upstream) => {
    expect(matchRoute(path)?.upstream).toBe(upstream);
  });

  it('knows no other path', () => {
    expect(matchRoute('/ops/other/')).toBeNull();
    expect(matchRoute('/sellersx/')).toBeNull();
    expect(matchRoute('/')).toBeNull();
  });

  it('keeps metric labels bounded by replacing ids', () => {
    expect(routeTemplate('/sellers/orders/3f1c2a4e-1b2c-4d3e-9f00-112233445566/tracking/')).toBe(
      '/sellers/orders/:id/tracking/',
    );
    expect(
      routeTemplate('/config/webhooks/3f1c2a4e-1b2c-4d3e-9f00-112233445566/deliveries/evt_abc123/resend/'),
    ).toBe('/config/webhooks/:id/deliveries/:event_id/resend/');
  });

  it('compares a Host header to a host name without its port, case-insensitively', () => {
    expect(hostIs('psp.example.com', 'psp.example.com')).toBe(true);
    expect(hostIs('PSP.Example.com:443', 'psp.example.com')).toBe(true);
    expect(hostIs('api.example.com', 'psp.example.com')).toBe(false);
    expect(hostIs('psp.example.com.evil.test', 'psp.example.com')).toBe(false);
    expect(hostIs('[::1]:8080', '[::1]')).toBe(true);
    expect(hostIs(undefined, 'psp.example.com')).toBe(false);
  });
});
