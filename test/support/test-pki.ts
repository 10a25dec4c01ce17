import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/*
 * Test-only certificate authorities and certificates, made at run time with the openssl command line
 * (node:crypto verifies certificates but does not issue them). Each lives two days; nothing is committed.
 */

export interface TestCertificate {
  cert: string;
  key: string;
  /** The subject as ingress-nginx passes it and docs/deploy.md has operators copy it (RFC 2253). */
  subject: string;
  issuer: string;
}

export interface TestCa extends TestCertificate {
  /** A client certificate (`clientAuth`) for `subject`, e.g. '/C=BR/O=PSP/CN=pix.psp.test'. */
  client(subject: string): TestCertificate;
  /** A server certificate (`serverAuth`) for a host name. */
  server(host: string): TestCertificate;
}

function openssl(args: string[], cwd: string): string {
  return execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `subject=CN=...` / `issuer=CN=...` of a PEM file, RFC 2253. */
function dn(file: string, which: 'subject' | 'issuer', cwd: string): string {
  const line = openssl(['x509', '-in', file, '-noout', `-${which}`, '-nameopt', 'RFC2253'], cwd).trim();
  return line.slice(line.indexOf('=') + 1);
}

/** A new CA named `subject` (an openssl `-subj`, e.g. '/C=BR/O=Test PSP/CN=Test PSP CA'). */
export function createTestCa(subject: string): TestCa {
  const dir = mkdtempSync(path.join(tmpdir(), 'sa-pki-'));
  let serial = 0;
  const keyArgs = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    openssl(
      ['req', '-x509', ...keyArgs, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', subject]
        .concat(['-addext', 'basicConstraints=critical,CA:TRUE'])
        .concat(['-addext', 'keyUsage=critical,keyCertSign,cRLSign']),
      dir,
    );
    const ca = {
      cert: readFileSync(path.join(dir, 'ca.crt'), 'utf8'),
      key: readFileSync(path.join(dir, 'ca.key'), 'utf8'),
    };
    const issue = (leafSubject: string, extensions: string): TestCertificate => {
      serial += 1;
      const work = mkdtempSync(path.join(tmpdir(), 'sa-pki-'));
      try {
        writeFileSync(path.join(work, 'ca.crt'), ca.cert);
        writeFileSync(path.join(work, 'ca.key'), ca.key);
        writeFileSync(path.join(work, 'ext.cnf'), extensions);
        openssl(
          ['req', '-new', ...keyArgs, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', leafSubject],
          work,
        );
        openssl(
          ['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-out', 'leaf.crt'].concat(
            ['-days', '2', '-set_serial', String(serial), '-extfile', 'ext.cnf'],
          ),
          work,
        );
        return {
          cert: readFileSync(path.join(work, 'leaf.crt'), 'utf8'),
          key: readFileSync(path.join(work, 'leaf.key'), 'utf8'),
          subject: dn('leaf.crt', 'subject', work),
          issuer: dn('leaf.crt', 'issuer', work),
        };
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    };
    return {
      ...ca,
      subject: dn('ca.crt', 'subject', dir),
      issuer: dn('ca.crt', 'issuer', dir),
      client: (leafSubject) => issue(leafSubject, 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n'),
      server: (host) =>
        issue(
          `/CN=${host}`,
          `basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:${host}\n`,
        ),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
