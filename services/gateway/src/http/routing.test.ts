import { hostIs, matchRoute, routeTemplate } from './routing';

describe('routing table', () => {
  it.each([
    ['/sellers/orders/', 'orders'],
    ['/sellers/orders', 'orders'],
    ['/sellers/orders/3f1c2a4e-1b2c-4d3e-9f00-112233445566/', 'orders'],
    ['/sellers/orders/3f1c2a4e-1b2c-4d3e-9f00-112233445566/refund/', 'orders'],
    // A due-date charge's amount due is orders' (docs/pix.md, "Due-date charges").
    ['/sellers/orders/3f1c2a4e-1b2c-4d3e-9f00-112233445566/amount-due/', 'orders'],
    ['/sellers/orders/3f1c2a4e-1b2c-4d3e-9f00-112233445566/postback-deliveries/', 'webhooks'],
    ['/sellers/orders/3f1c2a4e-1b2c-4d3e-9f00-112233445566/postback-deliveries', 'webhooks'],
    ['/sellers/orders/abc/postback-deliveries/def/resend/', 'webhooks'],
    ['/sellers/orders/postback-deliveries/', 'orders'],
    ['/sellers/products/abc/postback-deliveries/', 'orders'],
    ['/sandbox/orders/abc/pay/', 'orders'],
    ['/finance/balance/', 'withdrawals'],
    ['/ops/withdrawals/abc/approve/', 'withdrawals'],
    ['/config/webhooks/', 'webhooks'],
    ['/sellers/orders/summary/', 'orders'],
    ['/config/webhooks/health/', 'webhooks'],
    ['/finance/withdrawals/', 'withdrawals'],
    ['/events/', 'webhooks'],
    ['/events/evt_0123456789abcdefghijABCD/', 'webhooks'],
    ['/psp/webhook/pix', 'payments'],
  ])('sends %s to %s', (path, upstream) => {
    expect(matchRoute(path)?.upstream).toBe(upstream);
  });

  it('knows no other path', () => {
    expect(matchRoute('/ops/other/')).toBeNull();
    expect(matchRoute('/sellersx/')).toBeNull();
    expect(matchRoute('/eventsx/')).toBeNull();
    expect(matchRoute('/')).toBeNull();
  });

  it('labels a request by its documented route, and nothing else, so metric labels stay bounded', () => {
    const id = '3f1c2a4e-1b2c-4d3e-9f00-112233445566';
    expect(routeTemplate('PATCH', `/sellers/orders/${id}/tracking`)).toBe('/sellers/orders/:uuid/tracking/');
    expect(routeTemplate('POST', `/config/webhooks/${id}/deliveries/${id}/resend/`)).toBe(
      '/config/webhooks/:id/deliveries/:delivery_id/resend/',
    );
    expect(routeTemplate('GET', '/sellers/orders/')).toBe('/sellers/orders/');
    expect(routeTemplate('POST', `/sellers/orders/${id}/postback-deliveries/${id}/resend/`)).toBe(
      '/sellers/orders/:uuid/postback-deliveries/:delivery_id/resend/',
    );
    // A literal segment is not a parameter: these are routes of their own, not an order or a webhook.
    expect(routeTemplate('GET', '/sellers/orders/summary/')).toBe('/sellers/orders/summary/');
    expect(routeTemplate('GET', '/sellers/orders/summary')).toBe('/sellers/orders/summary/');
    expect(routeTemplate('GET', '/config/webhooks/health/')).toBe('/config/webhooks/health/');
    expect(routeTemplate('GET', `/sellers/orders/${id}/`)).toBe('/sellers/orders/:uuid/');
    expect(routeTemplate('GET', `/sellers/orders/${id}/amount-due/`)).toBe(
      '/sellers/orders/:uuid/amount-due/',
    );
    expect(routeTemplate('POST', `/sellers/orders/${id}/amount-due/`)).toBeNull();
    expect(routeTemplate('GET', `/config/webhooks/${id}/`)).toBe('/config/webhooks/:id/');
    expect(routeTemplate('PATCH', '/config/webhooks/health/')).toBe('/config/webhooks/:id/');
    expect(routeTemplate('GET', '/events/evt_0123456789abcdefghijABCD')).toBe('/events/:id/');
    // Whatever a caller sends, an undocumented path has no label of its own.
    expect(routeTemplate('GET', `/sellers/${Math.random()}/`)).toBeNull();
    expect(routeTemplate('GET', '/sellers/orders/a/b/c/')).toBeNull();
    expect(routeTemplate('DELETE', '/sellers/orders/')).toBeNull();
    expect(routeTemplate('POST', `/sellers/orders/${id}/tracking/`)).toBeNull();
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
