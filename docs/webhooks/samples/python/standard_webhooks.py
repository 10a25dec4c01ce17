"""Checks the Standard Webhooks signature of a delivery (webhook-id, webhook-timestamp, webhook-signature).

Standard library only; `pip install standardwebhooks` does the same (give it the secret in standard base64).
"""

import base64
import hashlib
import hmac
import time

TOLERANCE_SECONDS = 300


def standard_signing_key(secret: str) -> bytes:
    """The HMAC key: the text after whsec_, base64-decoded. Older secrets are base64url: same bytes."""
    if not secret.startswith("whsec_") or len(secret) == len("whsec_"):
        raise TypeError("the secret must be whsec_ followed by base64")
    text = secret[len("whsec_"):].replace("-", "+").replace("_", "/")
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)


def verify_standard_webhook(secrets, headers, raw_body: bytes) -> bool:
    """headers: any mapping with lowercase or case-insensitive keys. True when a signature matches."""
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        return False
    if not (timestamp.isascii() and timestamp.isdigit()) or abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    signed = f"{msg_id}.{timestamp}.".encode() + raw_body
    valid = False
    for secret in secrets:
        expected = base64.b64encode(hmac.new(standard_signing_key(secret), signed, hashlib.sha256).digest())
        # The header may hold several space-separated "v1,<base64>" signatures.
        for versioned in signatures.split(" "):
            version, _, signature = versioned.partition(",")
            valid = (version == "v1" and hmac.compare_digest(signature.encode(), expected)) or valid
    return valid
