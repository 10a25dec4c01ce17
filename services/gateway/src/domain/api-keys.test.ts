import { API_KEY_PATTERN } from '@seller-api/contracts';
import { environmentOfKey, generateApiKey, generateToken, hashApiKey } from './api-keys';

describe('API keys', () => {
  it('have the documented format with a 40-character token from [A-Za-z0-9]', () => {
    const key = generateApiKey('live');
    expect(key).toMatch(/^mk_live_[A-Za-z0-9]{40}$/);
    expect(API_KEY_PATTERN.test(key)).toBe(true);
    expect(generateApiKey('test')).toMatch(/^mk_test_/);
  });

  it('never repeat and use the whole alphabet', () => {
    const tokens = Array.from({ length: 500 }, () => generateToken());
    expect(new Set(tokens).size).toBe(500);
    const chars = new Set(tokens.join(''));
    expect(chars.size).toBe(62);
  });

  it('are stored as a SHA-256 hex digest', () => {
    expect(hashApiKey('mk_test_x')).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey('mk_test_x')).not.toBe(hashApiKey('mk_test_y'));
  });

  it('tell their environment only when well formed', () => {
    expect(environmentOfKey(generateApiKey('live'))).toBe('live');
    expect(environmentOfKey(generateApiKey('test'))).toBe('test');
    expect(environmentOfKey('mk_prod_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).toBeNull();
    expect(environmentOfKey('mk_test_short')).toBeNull();
  });
});
