import { hrefTo, parseHash } from './router';

describe('hash routes', () => {
  it('reads the path and the query', () => {
    const { path, query } = parseHash('#/webhooks/abc%20d?status=dead&page=c1&page=c2');
    expect(path).toEqual(['webhooks', 'abc d']);
    expect(query.get('status')).toBe('dead');
    expect(query.getAll('page')).toEqual(['c1', 'c2']);
    expect(parseHash('')).toEqual({ path: [], query: new URLSearchParams() });
  });

  it('writes a path with a query, leaving out empty values', () => {
    expect(hrefTo(['webhooks', 'w1'], { status: 'dead', other: '' })).toBe('#/webhooks/w1?status=dead');
    expect(hrefTo(['orders'])).toBe('#/orders');
    const back = parseHash(hrefTo(['orders'], new URLSearchParams('q=a%2Bb%40x.com')));
    expect(back.query.get('q')).toBe('a+b@x.com');
  });
});
