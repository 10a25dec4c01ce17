# syntax=docker/dockerfile:1
#
# The image of any of the five services, chosen by the SERVICE build argument:
#
#   docker build --build-arg SERVICE=orders -t seller-api/orders .
#
# SERVICE is one of gateway, orders, payments, withdrawals, webhook-dispatcher, and has no default: the
# build fails without it (no `service-<name>` stage below). The build context is the repository root:
# a service needs the root lockfile and the workspace packages it depends on (packages/contracts,
# packages/service-kit, and packages/api-pix, packages/qr for payments, or the panel, which the
# gateway's turbo.json builds first).
# What differs per service (its ports and start command) is in its `service-<name>` stage at the end.
# There is no Docker engine on the development machines and CI does not build images, so this file is
# kept correct by reading and by test/ops/dockerfiles.test.ts: see deploy/README.md.

ARG SERVICE

# ---------------------------------------------------------------------------------------------------
# base: one Node image for every stage, so the modules built in one stage run in the others. Node
# 24.22.3, the version CI runs on (scripts/fetch-node.sh pins it; test/ops/node-version.test.ts keeps
# the two equal): change both together.
FROM node:24.22.3-bookworm-slim AS base
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false

# ---------------------------------------------------------------------------------------------------
# manifests: only what `npm ci` reads. The source is not here, so editing code does not invalidate the
# dependency layers. npm ci checks the lockfile against every workspace, so every workspace's
# package.json is needed, not only this service's: a new workspace must be added here.
FROM base AS manifests
COPY package.json package-lock.json ./
COPY packages/api-pix/package.json packages/api-pix/
COPY packages/contracts/package.json packages/contracts/
COPY packages/due-date/package.json packages/due-date/
COPY packages/panel/package.json packages/panel/
COPY packages/qr/package.json packages/qr/
COPY packages/service-kit/package.json packages/service-kit/
COPY packages/webhook-verify/package.json packages/webhook-verify/
COPY services/gateway/package.json services/gateway/
COPY services/orders/package.json services/orders/
COPY services/payments/package.json services/payments/
COPY services/withdrawals/package.json services/withdrawals/
COPY services/webhook-dispatcher/package.json services/webhook-dispatcher/

# ---------------------------------------------------------------------------------------------------
# deps: every dependency, dev ones included (typescript, turbo). The same for every service, so the
# five builds share this layer.
# --ignore-scripts: building needs no install script (no package's install script should run in the
# build image: none is needed to compile TypeScript).
# The cache mount keeps npm's download cache between builds without putting it in a layer.
FROM manifests AS deps
RUN --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts

# ---------------------------------------------------------------------------------------------------
# build: compile this service and, through turbo's ^build dependency, the workspace packages it uses.
FROM deps AS build
ARG SERVICE
ENV TURBO_TELEMETRY_DISABLED=1 \
    DO_NOT_TRACK=1
COPY tsconfig.base.json turbo.json ./
COPY packages/ packages/
COPY services/${SERVICE}/ services/${SERVICE}/
RUN npx turbo run build --filter=@seller-api/${SERVICE}
# The compiled workspace packages this service uses (turbo built exactly those), without their sources.
RUN mkdir -p /out && for dist in packages/*/dist; do mkdir -p "/out/$dist" && cp -R "$dist/." "/out/$dist/"; done

# ---------------------------------------------------------------------------------------------------
# runtime: production dependencies and compiled JavaScript only; no sources, no dev tools.
FROM base AS runtime
ARG SERVICE
ENV NODE_ENV=production

# All workspaces' manifests again, for the same lockfile check as in `deps`. npm links every workspace
# into node_modules/@seller-api/; only the ones this service imports get a dist/ below.
# --ignore-scripts: the only production package with an install script is protobufjs, whose postinstall
# is a version notice.
COPY --from=manifests /app/ ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --ignore-scripts

COPY --from=build /out/packages/ packages/
COPY --from=build /app/services/${SERVICE}/dist/ services/${SERVICE}/dist/

# Files stay owned by root and read-only for the process: it never writes under /app.
USER node

# /healthz says the process answers (liveness); /readyz, which also probes PostgreSQL and RabbitMQ, is
# left to orchestrators that route traffic (Kubernetes readinessProbe). The slim image has no curl or
# wget, so the probe is Node's built-in fetch. The start period covers migrations run at start.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# ---------------------------------------------------------------------------------------------------
# One stage per service: its ports (those of the README's services table; docker-compose.yml and the
# Helm charts use the same) and its start command. Only the stage SERVICE names is built.
# Node runs as PID 1 and receives SIGTERM directly; service-kit handles it (two-phase shutdown).

FROM runtime AS service-gateway
ENV PORT=8080 \
    METRICS_PORT=9080
EXPOSE 8080 9080
CMD ["node", "services/gateway/dist/main.js"]

FROM runtime AS service-orders
ENV PORT=3001 \
    METRICS_PORT=9001
EXPOSE 3001 9001
CMD ["node", "services/orders/dist/main.js"]

FROM runtime AS service-payments
ENV PORT=3002 \
    METRICS_PORT=9002
EXPOSE 3002 9002
CMD ["node", "services/payments/dist/main.js"]

FROM runtime AS service-withdrawals
ENV PORT=3003 \
    METRICS_PORT=9003
EXPOSE 3003 9003
CMD ["node", "services/withdrawals/dist/main.js"]

FROM runtime AS service-webhook-dispatcher
ENV PORT=3004 \
    METRICS_PORT=9004
EXPOSE 3004 9004
CMD ["node", "services/webhook-dispatcher/dist/main.js"]

# ---------------------------------------------------------------------------------------------------
# The image: the stage of the service SERVICE names. Last, so that it is what `docker build` produces.
FROM service-${SERVICE}
