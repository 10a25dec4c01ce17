<?php
// Checks the Standard Webhooks signature of a delivery (webhook-id, webhook-timestamp, webhook-signature).
// Plain PHP 8; require it from your receiver.

/** @param string[] $secrets whsec_ + base64 (or the older base64url) */
function verify_standard_webhook(array $secrets, string $rawBody): bool
{
    $id = $_SERVER['HTTP_WEBHOOK_ID'] ?? '';
    $timestamp = $_SERVER['HTTP_WEBHOOK_TIMESTAMP'] ?? '';
    $signatures = explode(' ', $_SERVER['HTTP_WEBHOOK_SIGNATURE'] ?? '');
    if ($id === '' || !ctype_digit($timestamp) || abs(time() - (int) $timestamp) > 300) {
        return false;
    }
    $valid = false;
    foreach ($secrets as $secret) {
        $key = base64_decode(strtr(substr($secret, strlen('whsec_')), '-_', '+/'), true);
        if (!str_starts_with($secret, 'whsec_') || $key === false || $key === '') {
            continue;
        }
        $expected = 'v1,' . base64_encode(hash_hmac('sha256', "$id.$timestamp.$rawBody", $key, true));
        foreach ($signatures as $signature) {
            $valid = hash_equals($expected, $signature) || $valid;
        }
    }
    return $valid;
}
