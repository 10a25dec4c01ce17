import { apiPixEnvProblems } from './config';

const complete = {
  PSP_API_URL: 'https://pix.example-psp.com/api/v2',
  PSP_CLIENT_ID: 'id',
  PSP_CLIENT_SECRET: 'secret',
};
const problems = (source: NodeJS.ProcessEnv) =>
  apiPixEnvProblems(source, 'PSP_', 'PIX_PSP is bacen-api-pix', () => false);

describe('API Pix connection variables', () => {
  it('wants the client certificate in production: API Pix requires mutual TLS', () => {
    expect(problems({ ...complete, NODE_ENV: 'production' })).toEqual([
      'PSP_TLS_CERT_FILE: Required in production (API Pix requires mutual TLS)',
      'PSP_TLS_KEY_FILE: Required in production (API Pix requires mutual TLS)',
    ]);
    expect(
      problems({
        ...complete,
        NODE_ENV: 'production',
        PSP_TLS_CERT_FILE: '/etc/psp/tls.crt',
        PSP_TLS_KEY_FILE: '/etc/psp/tls.key',
      }),
    ).toEqual([]);
    // Half a certificate is named once, as the half that is missing.
    expect(problems({ ...complete, NODE_ENV: 'production', PSP_TLS_CERT_FILE: '/c.pem' })).toEqual([
      'PSP_TLS_KEY_FILE: Required when PSP_TLS_CERT_FILE is set',
    ]);
  });

  it('leaves the certificate optional outside production', () => {
    expect(problems(complete)).toEqual([]);
    expect(problems({ ...complete, NODE_ENV: 'development' })).toEqual([]);
  });

  it('refuses plain http in production, the token URL included', () => {
    expect(
      problems({
        ...complete,
        NODE_ENV: 'production',
        PSP_TOKEN_URL: 'http://auth.example-psp.com/oauth/token',
        PSP_TLS_CERT_FILE: '/c.pem',
        PSP_TLS_KEY_FILE: '/k.pem',
      }),
    ).toEqual(['PSP_TOKEN_URL: Must be an https URL in production']);
  });
});
