import { X509Certificate } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { TestCa } from './test-pki';

/*
 * A stand-in for the ingress of one PSP host (docs/deploy.md, "PSP notifications"): TLS on a free
 * 127.0.0.1 port with a server certificate for `host`, asking every client for a certificate and
 * verifying it against `clientCa` (one PSP's CA), as ingress-nginx does with
 * `auth-tls-verify-client: "on"` and `auth-tls-secret`:
 *
 * - no certificate, or one the CA did not sign: 400, nothing forwarded;
 * - a Host other than `host`: 421 (nginx's answer when Host and the verified server name differ);
 * - otherwise forwarded to `upstream` (the gateway) from `localAddress` (its address, which the gateway
 *   is told in PSP_INGRESS_ADDRESSES), with the client's own `ssl-client-*` headers replaced by
 *   `ssl-client-verify: SUCCESS` and the certificate's subject and issuer (RFC 2253).
 *
 * A client reaches it with https.request({ host: '127.0.0.1', port, servername: host, ca: ingress.ca,
 * cert, key, headers: { host } }).
 */

export interface PspIngress {
  /** https://127.0.0.1:<port> */
  origin: string;
  port: number;
  host: string;
  /** The CA of the ingress's own server certificate, for clients to trust. */
  ca: string;
  /** Requests refused at the TLS check (400) so far. */
  readonly refused: number;
  close(): Promise<void>;
}

export interface PspIngressOptions {
  host: string;
  /** The PEM of the CA (or CAs) client certificates must chain to. */
  clientCa: string | string[];
  /** Where the gateway listens, e.g. http://127.0.0.1:1234 (its origin, no path). */
  upstream: string;
  /** The address the ingress connects from; 127.0.0.2 by default. */
  localAddress?: string;
  /** Issues the ingress's server certificate. */
  serverCa: TestCa;
}

/** A distinguished name as nginx's $ssl_client_s_dn prints it (RFC 2253: last RDN first). */
function rfc2253(name: string): string {
  return name
    .split('\n')
    .filter((part) => part !== '')
    .reverse()
    .map((part) => {
      const eq = part.indexOf('=');
      const value = part.slice(eq + 1).replace(/([,+"\\<>;])/g, '\\$1');
      return `${part.slice(0, eq)}=${value}`;
    })
    .join(',');
}

export async function startPspIngress(options: PspIngressOptions): Promise<PspIngress> {
  const serverCert = options.serverCa.server(options.host);
  const localAddress = options.localAddress ?? '127.0.0.2';
  const upstream = new URL(options.upstream);
  let refused = 0;
  const server = https.createServer(
    {
      cert: serverCert.cert,
      key: serverCert.key,
      ca: options.clientCa,
      requestCert: true,
      // As nginx: the handshake completes, and the request is answered 400 when the check failed.
      rejectUnauthorized: false,
    },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      const peer = socket.getPeerX509Certificate();
      if (!socket.authorized || !peer) {
        refused += 1;
        req.resume();
        res.writeHead(400, { 'content-type': 'text/html' });
        res.end(peer ? 'The SSL certificate error' : 'No required SSL certificate was sent');
        return;
      }
      const hostHeader = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
      if (hostHeader !== options.host) {
        req.resume();
        res.writeHead(421);
        res.end('Misdirected Request');
        return;
      }
      const headers: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(req.headers))
        if (!name.startsWith('ssl-client-') && value !== undefined) headers[name] = value;
      Object.assign(headers, {
        'ssl-client-verify': 'SUCCESS',
        'ssl-client-subject-dn': rfc2253(peer.subject),
        'ssl-client-issuer-dn': rfc2253(peer.issuer),
        'x-forwarded-for': socket.remoteAddress ?? '',
        'x-forwarded-proto': 'https',
      });
      const forward = http.request(
        {
          host: upstream.hostname,
          port: upstream.port,
          localAddress,
          method: req.method,
          path: req.url,
          headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      forward.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      req.pipe(forward);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://127.0.0.1:${port}`,
    port,
    host: options.host,
    ca: options.serverCa.cert,
    get refused() {
      return refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The subject of a PEM certificate as the ingress passes it (RFC 2253). */
export function subjectOf(pem: string): string {
  return rfc2253(new X509Certificate(pem).subject);
}
