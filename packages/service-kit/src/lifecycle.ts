import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { MESSAGES } from '@seller-api/contracts';
import type { Logger } from './logger';

export async function listen(
  app: Express | http.RequestListener,
  port: number,
  host = '0.0.0.0',
): Promise<http.Server> {
  const server = http.createServer(app);
  // Behind a load balancer with its own keep-alive, ours must outlive it to avoid resets.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on('clientError', answerMalformedRequest);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

/**
 * A request node:http cannot parse (a raw byte above 0x7f in its path, a broken header line) gets the
 * documented error shape too, not node's bare `400 Bad Request`; then the connection is closed.
 */
function answerMalformedRequest(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const body = JSON.stringify({
    message: tooLarge ? 'Request headers are too large.' : 'Malformed HTTP request.',
    code: 'validation_error',
    request_id: randomUUID(),
    data: { request: [tooLarge ? MESSAGES.headersTooLarge : MESSAGES.malformedRequest] },
  });
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function portOf(server: http.Server): number {
  return (server.address() as AddressInfo).port;
}

/** Stop accepting, let in-flight requests finish, then drop keep-alive connections as they go idle. */
export async function closeServer(server: http.Server, graceMs: number): Promise<void> {
  await new Promise<void>((resolve) => {
    // A keep-alive connection that finishes its request after close() would otherwise linger until
    // the client drops it.
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const force = setTimeout(() => {
      server.closeAllConnections();
    }, graceMs);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/**
 * Two-phase shutdown on SIGTERM/SIGINT: phase one stops intake (HTTP, consumers) and waits for what is in
 * flight; phase two closes connections. The process exits within `timeoutMs` whatever happens.
 */
export function handleSignals(logger: Logger, stop: () => Promise<void>, timeoutMs: number): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.error('shutdown timed out, exiting');
      process.exit(1);
    }, timeoutMs);
    deadline.unref();
    stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
