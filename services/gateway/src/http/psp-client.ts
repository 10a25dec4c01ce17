import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';
import { type PspClientCertificate } from '@seller-api/service-kit';
import { hostIs } from './routing';

/*
 * A PSP's TLS client certificate, as the ingress of its notification host verified it (docs/deploy.md,
 * "PSP notifications"). ingress-nginx, on a host with `auth-tls-secret`, sets these request headers
 * itself, replacing whatever the client sent:
 *
 *   ssl-client-verify      SUCCESS, or why not (NONE, FAILED:<reason>)
 *   ssl-client-subject-dn  the certificate's subject, RFC 2253
 *   ssl-client-issuer-dn   its issuer, RFC 2253
 *   ssl-client-cert        the certificate itself (URL-encoded PEM), with pass-certificate-to-upstream
 *
 * On any other host it passes a client's own copies through untouched. So they are believed only on a
 * PSP host (PSP_NOTIFICATION_HOST) and from a peer in PSP_INGRESS_ADDRESSES, and never forwarded as
 * they are: payments gets the verdict signed with the gateway's key for it, in headers (`x-sa-*`) that no
 * client can pass through the gateway. Payments decides which PSP, so which environment, it is
 * (its http/psp-senders.ts reads what this writes).
 */

const VERIFY = 'ssl-client-verify';
const SUBJECT = 'ssl-client-subject-dn';
const ISSUER = 'ssl-client-issuer-dn';
/** Every header of the ingress's verdict: dropped from every request the gateway forwards. */
export const INGRESS_CLIENT_CERT_PREFIX = 'ssl-client-';

const MAX_DN = 1024;

export type { PspClientCertificate };

export interface PspClientCheck {
  /** PSP_NOTIFICATION_HOST: the PSPs' hosts; unset, no certificate is ever believed. */
  hosts: readonly string[] | undefined;
  /** PSP_INGRESS_ADDRESSES: the peers allowed to state a verdict. */
  ingress: (address: string, hop: number) => boolean;
}

/** The check of PSP_NOTIFICATION_HOST and PSP_INGRESS_ADDRESSES. */
export function pspClientCheck(
  hosts: readonly string[] | undefined,
  ingress: readonly string[],
): PspClientCheck {
  return { hosts, ingress: proxyaddr.compile([...ingress]) };
}

/** The PSP host a request's Host header names, or null. */
export function pspHostOf(req: IncomingMessage, hosts: readonly string[]): string | null {
  return hosts.find((host) => hostIs(req.headers.host, host)) ?? null;
}

/**
 * The certificate the ingress verified for this request, or null: only on a PSP host, from an
 * ingress address, with one `ssl-client-verify: SUCCESS` and one non-empty subject.
 */
export function verifiedPspClient(req: IncomingMessage, check: PspClientCheck): PspClientCertificate | null {
  if (!check.hosts) return null;
  const host = pspHostOf(req, check.hosts);
  if (host === null || !check.ingress(req.socket.remoteAddress ?? '', 0)) return null;
  const { headers } = req;
  const subject = headers[SUBJECT];
  const issuer = headers[ISSUER] ?? '';
  if (headers[VERIFY] !== 'SUCCESS' || typeof subject !== 'string' || typeof issuer !== 'string') return null;
  if (subject === '' || subject.length > MAX_DN || issuer.length > MAX_DN) return null;
  return { subject, issuer, host };
}
