"""Receives seller-api webhooks. Standard library only: a WSGI app, served here by wsgiref.

Run: SELLER_API_WEBHOOK_SECRET=whsec_... PORT=3000 python3 receiver.py
(or under any WSGI server: gunicorn receiver:app). With Flask, call
verify_webhook(SECRETS, request.headers, request.get_data()) in the view.
"""

import hashlib
import hmac
import json
import os
import sys
import time
from wsgiref.simple_server import make_server

TOLERANCE_SECONDS = 300

# Refuse to start without a secret: an empty key would accept signatures anyone can compute.
SECRET = os.environ.get("SELLER_API_WEBHOOK_SECRET", "").strip()
if not SECRET:
    sys.exit("SELLER_API_WEBHOOK_SECRET is not set")
# While rotating, also accept the previous secret for a few minutes.
SECRETS = [s for s in (SECRET, os.environ.get("SELLER_API_WEBHOOK_PREVIOUS_SECRET", "").strip()) if s]


class VerificationError(Exception):
    pass


def verify_webhook(secrets, headers, raw_body: bytes) -> dict:
    """Checks a delivery; returns its envelope. headers: any mapping with lowercase or case-insensitive keys."""
    if not secrets or not all(secrets):
        raise TypeError("secrets must be non-empty strings")
    event_id = headers.get("x-webhook-event-id")
    timestamp = headers.get("x-webhook-timestamp")
    signature = headers.get("x-webhook-signature")
    if not event_id or not timestamp or not signature:
        raise VerificationError("missing_header")
    if not (timestamp.isascii() and timestamp.isdigit()):
        raise VerificationError("invalid_timestamp")
    if abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
        raise VerificationError("timestamp_out_of_tolerance")

    signed = f"{event_id}.{timestamp}.".encode() + raw_body
    received = signature.strip().lower().encode()
    valid = False
    for secret in secrets:  # the key is the whole secret string, whsec_ included
        digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
        valid = hmac.compare_digest(f"sha256={digest}".encode(), received) or valid
    if not valid:
        raise VerificationError("invalid_signature")

    try:
        envelope = json.loads(raw_body)
    except ValueError:
        raise VerificationError("invalid_body") from None
    if not (
        isinstance(envelope, dict)
        and isinstance(envelope.get("event"), str)
        and isinstance(envelope.get("occurred_at"), str)
        and isinstance(envelope.get("delivery_attempt"), int)
        and isinstance(envelope.get("data"), dict)
    ):
        raise VerificationError("invalid_body")
    return envelope


# Stand-ins for your database and job queue: keep handled event ids under a unique key in a table, and
# enqueue to a durable queue (a jobs table, RabbitMQ, SQS, ...). Here: a set and a JSON-lines file.
HANDLED = set()
QUEUE_FILE = os.environ.get("QUEUE_FILE", "webhook-queue.jsonl")


def enqueue(event_id: str, envelope: dict) -> None:
    with open(QUEUE_FILE, "a", encoding="utf-8") as queue:
        queue.write(json.dumps({"event_id": event_id, **envelope}) + "\n")


def app(environ, start_response):
    def answer(status, body=b""):
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]

    if environ["REQUEST_METHOD"] != "POST" or environ.get("PATH_INFO") != "/webhooks/seller-api":
        return answer("404 Not Found")
    length = int(environ.get("CONTENT_LENGTH") or 0)
    if length > 1024 * 1024:
        return answer("413 Payload Too Large")
    raw_body = environ["wsgi.input"].read(length)  # the exact bytes the signature covers
    headers = {key[5:].replace("_", "-").lower(): value for key, value in environ.items() if key.startswith("HTTP_")}
    try:
        envelope = verify_webhook(SECRETS, headers, raw_body)
    except VerificationError as error:
        return answer("400 Bad Request", json.dumps({"error": str(error)}).encode())

    event_id = headers["x-webhook-event-id"]
    if event_id in HANDLED:  # a retry or a resend of an event already queued
        return answer("204 No Content")
    try:
        enqueue(event_id, envelope)  # the work happens in a worker, not in this request
    except OSError as error:
        print(f"enqueue failed: {error}", file=sys.stderr)
        return answer("503 Service Unavailable")  # not recorded as handled: the delivery is retried
    HANDLED.add(event_id)  # only once the event is safely queued
    return answer("204 No Content")


if __name__ == "__main__":
    with make_server("", int(os.environ.get("PORT", "3000")), app) as server:
        print(f"listening on port {server.server_port}", flush=True)
        server.serve_forever()
