<?php
// Receives seller-api webhooks. Plain PHP, no extension beyond the defaults.
// Run: SELLER_API_WEBHOOK_SECRET=whsec_... php -S 0.0.0.0:3000 receiver.php
const TOLERANCE_SECONDS = 300;

/** @param string[] $secrets */
function verify_webhook(array $secrets, string $rawBody): array
{
    $eventId = $_SERVER['HTTP_X_WEBHOOK_EVENT_ID'] ?? '';
    $timestamp = $_SERVER['HTTP_X_WEBHOOK_TIMESTAMP'] ?? '';
    $signature = strtolower(trim($_SERVER['HTTP_X_WEBHOOK_SIGNATURE'] ?? ''));
    if ($eventId === '' || $timestamp === '' || $signature === '') {
        throw new RuntimeException('missing_header');
    }
    if (!ctype_digit($timestamp)) {
        throw new RuntimeException('invalid_timestamp');
    }
    if (abs(time() - (int) $timestamp) > TOLERANCE_SECONDS) {
        throw new RuntimeException('timestamp_out_of_tolerance');
    }

    $valid = false;
    foreach ($secrets as $secret) {
        // hash_hmac returns lowercase hex; the key is the whole secret string, whsec_ included.
        $expected = 'sha256=' . hash_hmac('sha256', $eventId . '.' . $timestamp . '.' . $rawBody, $secret);
        $valid = hash_equals($expected, $signature) || $valid;
    }
    if (!$valid) {
        throw new RuntimeException('invalid_signature');
    }
    $envelope = json_decode($rawBody, true);
    if (!is_array($envelope) || !is_string($envelope['event'] ?? null) || !is_array($envelope['data'] ?? null)) {
        throw new RuntimeException('invalid_body');
    }
    return $envelope;
}

// Refuse to work without a secret: getenv() gives false when the variable is unset, and hash_hmac would
// then key with "", a signature anyone can compute. 500 makes the delivery come back once it is set.
$secret = trim((string) getenv('SELLER_API_WEBHOOK_SECRET'));
if ($secret === '') {
    error_log('SELLER_API_WEBHOOK_SECRET is not set');
    http_response_code(500);
    exit;
}
// While rotating, also accept the previous secret for a few minutes.
$secrets = array_values(array_filter([$secret, trim((string) getenv('SELLER_API_WEBHOOK_PREVIOUS_SECRET'))]));

$rawBody = file_get_contents('php://input'); // the raw bytes, not $_POST
try {
    $envelope = verify_webhook($secrets, $rawBody);
} catch (RuntimeException $e) {
    http_response_code(400);
    header('Content-Type: application/json');
    exit(json_encode(['error' => $e->getMessage()]));
}

// Stand-ins for your database and job queue: keep handled event ids under a unique key in a table, and
// enqueue to a durable queue. Here: one marker file per handled event id, and a JSON-lines file.
$eventId = $_SERVER['HTTP_X_WEBHOOK_EVENT_ID'];
$handledDir = getenv('HANDLED_DIR') ?: sys_get_temp_dir() . '/seller-api-handled';
$marker = $handledDir . '/' . hash('sha256', $eventId);
if (file_exists($marker)) { // a retry or a resend of an event already queued
    http_response_code(204);
    exit;
}
$line = json_encode(['event_id' => $eventId] + $envelope) . "\n";
if (@file_put_contents(getenv('QUEUE_FILE') ?: 'webhook-queue.jsonl', $line, FILE_APPEND | LOCK_EX) === false) {
    http_response_code(503); // not recorded as handled: the delivery is retried
    exit;
}
if (!is_dir($handledDir)) {
    @mkdir($handledDir, 0700, true);
}
touch($marker); // only once the event is safely queued
http_response_code(204); // the work happens in a worker, not in this request
