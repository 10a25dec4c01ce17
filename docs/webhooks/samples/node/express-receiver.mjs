// Receives seller-api webhooks with Express and @seller-api/webhook-verify.
// Run: SELLER_API_WEBHOOK_SECRET=whsec_... PORT=3000 node express-receiver.mjs
import { appendFile } from 'node:fs/promises';
import express from 'express';
import { verifyWebhook, WebhookVerificationError } from '@seller-api/webhook-verify';

// Refuse to start without a secret: an empty key would accept signatures anyone can compute.
const secret = process.env.SELLER_API_WEBHOOK_SECRET ?? '';
if (secret.trim() === '') {
  console.error('SELLER_API_WEBHOOK_SECRET is not set');
  process.exit(1);
}
// While rotating, also accept the previous secret for a few minutes.
const secrets = [secret, process.env.SELLER_API_WEBHOOK_PREVIOUS_SECRET].filter(Boolean);

// Stand-ins for your database and job queue: keep handled event ids under a unique key in a table, and
// enqueue to a durable queue (a jobs table, RabbitMQ, SQS, ...). Here: a set and a JSON-lines file.
const handled = new Set();
const queueFile = process.env.QUEUE_FILE ?? 'webhook-queue.jsonl';
async function enqueue(delivery) {
  await appendFile(queueFile, `${JSON.stringify(delivery)}\n`);
}

const app = express();

// express.raw keeps the exact bytes the signature covers; express.json() would re-serialise them.
app.post('/webhooks/seller-api', express.raw({ type: '*/*', limit: '1mb' }), async (req, res) => {
  // Without a body, express leaves req.body undefined: verify an empty body, which fails with a 400.
  const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
  let delivery;
  try {
    delivery = verifyWebhook({ secret: secrets, headers: req.headers, rawBody });
  } catch (error) {
    if (error instanceof WebhookVerificationError) {
      res.status(400).json({ error: error.code }); // missing_header, invalid_signature, invalid_body, ...
      return;
    }
    throw error;
  }

  // A retry or a resend of an event already queued: answer 2xx so it stops.
  if (handled.has(delivery.eventId)) {
    res.status(204).end();
    return;
  }
  try {
    await enqueue(delivery); // the work happens in a worker, not in this request
  } catch (error) {
    console.error('enqueue failed', error);
    res.status(503).end(); // not recorded as handled: the delivery is retried
    return;
  }
  handled.add(delivery.eventId); // only once the event is safely queued
  res.status(204).end();
});

const server = app.listen(Number(process.env.PORT ?? 3000), () => {
  console.log(`listening on port ${server.address().port}`);
});
