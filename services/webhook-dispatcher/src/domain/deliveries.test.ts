import { newEventId } from './deliveries';

// X-Webhook-Event-Id is one per delivery, the same on every attempt and resend (docs/webhooks.md). No
// index enforces it since Migration20261214DeliveriesCheaperVersions: the id's randomness does.
test('event ids are evt_ and 24 letters and digits, and never repeat', () => {
  const ids = Array.from({ length: 20_000 }, newEventId);
  for (const id of ids) expect(id).toMatch(/^evt_[A-Za-z0-9]{24}$/);
  expect(new Set(ids).size).toBe(ids.length);
  // Every letter and digit turns up: no part of the alphabet is lost.
  expect(new Set(ids.join('').replaceAll('evt_', '')).size).toBe(62);
});
