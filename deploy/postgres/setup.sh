#!/bin/sh
# docker-compose.yml's `db-setup`: gives each service its own PostgreSQL role, owner of its schema only,
# with the password compose passes in <SERVICE>_DB_PASSWORD. Idempotent, so it runs on every
# `docker compose up`: on a new volume it creates the roles and schemas, on a volume whose schemas an
# earlier version created as `postgres` it hands them over (docs/deploy.md, "One role and one broker
# user per service"). Connects with PGHOST, PGUSER, PGPASSWORD and PGDATABASE.
set -eu
psql -v ON_ERROR_STOP=1 -q -f /setup/service-roles.sql
for pair in "sa_gateway:$GATEWAY_DB_PASSWORD" "sa_orders:$ORDERS_DB_PASSWORD" \
  "sa_payments:$PAYMENTS_DB_PASSWORD" "sa_withdrawals:$WITHDRAWALS_DB_PASSWORD" \
  "sa_webhooks:$WEBHOOK_DISPATCHER_DB_PASSWORD"; do
  # psql quotes :"role" and :'password' itself (stdin, where variables are interpolated).
  echo "alter role :\"role\" password :'password';" |
    psql -v ON_ERROR_STOP=1 -q -v role="${pair%%:*}" -v password="${pair#*:}"
done
echo "PostgreSQL roles ready"
