#!/bin/sh
# docker-compose.yml's `broker-setup`: one RabbitMQ user per service with the permissions of
# deploy/rabbitmq/permissions/<user>.json (docs/messaging.md, "Permissions"), through the management
# API as the administrator (RABBITMQ_ADMIN_USER / RABBITMQ_ADMIN_PASSWORD), and removes `guest`, which
# may do anything. Idempotent: it runs on every `docker compose up`. Passwords: <SERVICE>_AMQP_PASSWORD
# (letters and digits: they are written into JSON and URLs as they are).
set -eu
api="http://rabbitmq:15672/api"
auth="$RABBITMQ_ADMIN_USER:$RABBITMQ_ADMIN_PASSWORD"
for pair in "sa_gateway:$GATEWAY_AMQP_PASSWORD" "sa_orders:$ORDERS_AMQP_PASSWORD" \
  "sa_payments:$PAYMENTS_AMQP_PASSWORD" "sa_withdrawals:$WITHDRAWALS_AMQP_PASSWORD" \
  "sa_webhooks:$WEBHOOK_DISPATCHER_AMQP_PASSWORD"; do
  user="${pair%%:*}"
  curl -fsS -u "$auth" -X PUT -H 'content-type: application/json' \
    -d "{\"password\":\"${pair#*:}\",\"tags\":\"\"}" "$api/users/$user"
  curl -fsS -u "$auth" -X PUT -H 'content-type: application/json' \
    -d "@/setup/permissions/$user.json" "$api/permissions/%2F/$user"
done
# 404 once it is gone.
curl -sS -o /dev/null -u "$auth" -X DELETE "$api/users/guest"
echo "RabbitMQ users ready"
