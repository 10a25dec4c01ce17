# syntax=docker/dockerfile:1
#
# The image of any of the five services, chosen by the SERVICE build argument:
#
#   docker build --build-arg SERVICE=orders -t seller-api/orders .
#
# SERVICE is one of gateway, orders, payments, withdrawals, webhook-dispatcher, and has no default: the
# build fails without it. One file for the five, because they differ only in their ports and start
# command (the `service-<name>` stages at the end); everything else, and every review of it, is shared.
# The build context is the repository root; `turbo prune` cuts it down to the service and the
# workspaces it depends on, with a lockfile of theirs only, so a change elsewhere in the monorepo does
# not invalidate this service's dependency layers.
# There is no container engine on the development machines and CI does not build images: this file is
# checked by test/ops (dockerfile-utils' validator, the rules of dockerfile-lint.ts, the stages) and the
# pruned build by `npm run images:check`; see docs/deploy.md, "Images".

ARG SERVICE

# ---------------------------------------------------------------------------------------------------
# node: the one pinned base. Node 24.22.3, the version CI runs on (scripts/fetch-node.sh pins it;
# test/ops/node-version.test.ts keeps them equal): change both together.
# DIGEST: pin it by digest too, as node:24.22.3-bookworm-slim@sha256:<index digest>, taken from the
# registry where the images are built (`docker buildx imagetools inspect node:24.22.3-bookworm-slim`);
# no registry of images is reachable from the machines this file is written on (docs/deploy.md).
FROM node:24.22.3-bookworm-slim AS node

# ---------------------------------------------------------------------------------------------------
# base: the build stages' tools (npm, turbo); none of it reaches the runtime image.
FROM node AS base
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false \
    TURBO_TELEMETRY_DISABLED=1 \
    DO_NOT_TRACK=1

# ---------------------------------------------------------------------------------------------------
# prune: the service's workspaces and a lockfile cut down to them (`json/` holds only the manifests,
# `full/` the sources too). turbo is the root package.json's exact version (test/ops keeps them equal).
FROM base AS prune
ARG SERVICE
RUN --mount=type=cache,target=/root/.npm \
    npm install --global --ignore-scripts turbo@2.11.11
COPY . .
# The scopes are words on purpose (the gateway has two); prune-scopes fails on a missing SERVICE.
RUN scopes="$(node deploy/images/prune-scopes.mjs "${SERVICE}")" \
    && turbo prune ${scopes} --docker --out-dir /pruned

# ---------------------------------------------------------------------------------------------------
# deps: every dependency of the pruned workspaces, dev ones included (typescript, vite). Its input is
# the manifests and the pruned lockfile only, so editing code does not invalidate it.
# --ignore-scripts: compiling needs no install script, and none should run in a build.
# The cache mount keeps npm's download cache between builds without putting it in a layer.
FROM base AS deps
COPY --from=prune /pruned/json/ ./
COPY --from=prune /pruned/package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts

# ---------------------------------------------------------------------------------------------------
# build: compile the service and, through turbo's ^build, the workspaces it uses; then keep the dist/
# of each workspace that is imported at run time (a `main`: the panel has none, the gateway copies its
# build into its own dist/public).
FROM deps AS build
ARG SERVICE
COPY --from=prune /pruned/full/ ./
COPY tsconfig.base.json ./
RUN node_modules/.bin/turbo run build --filter="@seller-api/${SERVICE}"
RUN for manifest in packages/*/package.json services/*/package.json; do \
      ws="$(dirname "$manifest")"; \
      if [ -n "$(node -p "require('./$manifest').main ?? ''")" ]; then \
        mkdir -p "/out/$ws/dist" && cp -R "$ws/dist/." "/out/$ws/dist/"; \
      fi; \
    done

# ---------------------------------------------------------------------------------------------------
# production: the production dependencies of the pruned workspaces, installed apart from the build so
# that no dev dependency can leak into it. npm links each workspace into node_modules/@seller-api/.
# --ignore-scripts: the only production package with an install script is protobufjs, whose postinstall
# is a version notice.
FROM base AS production
COPY --from=prune /pruned/json/ ./
COPY --from=prune /pruned/package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --ignore-scripts

# ---------------------------------------------------------------------------------------------------
# runtime: Node, production dependencies and compiled JavaScript only. No npm, npx, corepack or yarn:
# nothing here installs anything, and a package manager is tooling an attacker would use.
FROM node AS runtime
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx \
      /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-* \
    && if command -v npm || command -v npx || command -v corepack || command -v yarn; then exit 1; fi
WORKDIR /app
ENV NODE_ENV=production
COPY --from=production /app/ ./
COPY --from=build /out/ ./

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
