import { API_KEY_PATTERN, Identity, apiKeyEnvironment } from './auth';

const TOKEN = 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6';

describe('API keys', () => {
  it('matches mk_<env>_<token of 32+ alphanumerics>', () => {
    expect(API_KEY_PATTERN.test(`mk_test_${TOKEN}`)).toBe(true);
    expect(API_KEY_PATTERN.test(`mk_live_${TOKEN}xyz`)).toBe(true);
    expect(API_KEY_PATTERN.test(`mk_prod_${TOKEN}`)).toBe(false);
    expect(API_KEY_PATTERN.test(`mk_test_${TOKEN.slice(1)}`)).toBe(false);
    expect(API_KEY_PATTERN.test(`mk_test_${TOKEN.slice(1)}-`)).toBe(false);
  });

  it('reads the environment of a well-formed key only', () => {
    expect(apiKeyEnvironment(`mk_live_${TOKEN}`)).toBe('live');
    expect(apiKeyEnvironment(`mk_test_${TOKEN}`)).toBe('test');
    expect(apiKeyEnvironment('mk_test_short')).toBeNull();
  });

  it('describes an operator identity without seller', () => {
    const identity = {
      user_id: '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c',
      seller_id: null,
      environment: 'live',
      role: 'operator',
    };
    expect(Identity.parse(identity)).toEqual(identity);
    expect(Identity.safeParse({ ...identity, role: 'admin' }).success).toBe(false);
  });
});
