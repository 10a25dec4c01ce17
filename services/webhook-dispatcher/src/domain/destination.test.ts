import { destinationOf } from './destination';

describe('destinationOf', () => {
  it('is one destination for every path, query, user part, case and default port of a host', () => {
    const urls = [
      'https://hooks.example.com/a',
      'https://hooks.example.com/b?x=1',
      'https://HOOKS.Example.COM/c#frag',
      'https://hooks.example.com:443/d',
      'https://hooks.example.com./e',
      'https://user:pass@hooks.example.com/f',
      'HTTPS://hooks.example.com',
    ];
    expect(new Set(urls.map(destinationOf))).toEqual(new Set(['https://hooks.example.com:443']));
  });

  it('tells schemes and ports apart', () => {
    expect(destinationOf('http://hooks.example.com/a')).toBe('http://hooks.example.com:80');
    expect(destinationOf('https://hooks.example.com:8443/a')).toBe('https://hooks.example.com:8443');
    expect(destinationOf('http://hooks.example.com:443/a')).toBe('http://hooks.example.com:443');
  });

  it('writes an IPv4 address in one form, and keeps IPv6 brackets', () => {
    expect(destinationOf('http://2130706433:3000/x')).toBe('http://127.0.0.1:3000');
    expect(destinationOf('http://0x7f.1:3000/y')).toBe('http://127.0.0.1:3000');
    expect(destinationOf('http://[::1]:3000/z')).toBe('http://[::1]:3000');
  });

  it('keeps an unparseable URL as it is (its own destination)', () => {
    expect(destinationOf('not a url')).toBe('not a url');
  });
});
