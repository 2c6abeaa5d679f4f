# syntax=docker/dockerfile:1
#
# One image for every process: the API (default command), the publisher, the webhooks worker, the admin
# CLI and the migration runner (`npm run db:migrate`). Not built on the development machines (no Docker
# engine there): kept correct by reading, and every step mirrors .ci/run, which does run here.
#
# Install scripts stay off. package.json `allowScripts` denies every package that has one; each install also
# says --ignore-scripts so an image whose npm predates `allowScripts` cannot run them either.
# `npm ci` may refuse the lockfile when it was written against a registry mirror that lacks other
# platforms' optional binaries; then, as in .ci/run, `npm install` installs the same locked versions.

# Node 24 is the current LTS (Node 20 reached its end of life in April 2026); CI runs the tests on 24 too.
ARG NODE_IMAGE=node:24-bookworm-slim

# Every workspace manifest in its folder (nothing else), so the dependency layers below are rebuilt only
# when a manifest changes, and a new workspace needs no edit here.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN mkdir /manifests \
  && find . -name package.json -not -path '*/node_modules/*' -print0 \
    | tar --null -cf - --files-from=- \
    | tar -xf - -C /manifests

# Build: all dependencies, the generated Prisma client, then `tsc -b` into each workspace's dist/.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package-lock.json .npmrc ./
COPY --from=manifests /manifests/ ./
RUN npm ci --ignore-scripts \
  || { echo 'npm ci refused the lockfile; installing the locked versions with npm install'; \
       npm install --ignore-scripts; }
COPY . .
# Like .ci/run: generate must say it generated (the client is compiled into packages/db/dist/generated).
RUN out="$(npm run -s generate 2>&1)"; status=$?; echo "$out"; \
    [ "$status" -eq 0 ] && echo "$out" | grep -q 'Generated Prisma Client'
RUN npm run -s build \
  && test -f packages/db/dist/generated/prisma/client.js \
  && mkdir /dist \
  && find . -mindepth 3 -maxdepth 3 -type d -name dist -not -path './node_modules/*' \
       -exec cp -a --parents {} /dist/ \; \
  && find /dist -name '*.tsbuildinfo' -delete

# Production dependencies only, from the same manifests and lockfile (workspace links included).
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package-lock.json .npmrc ./
COPY --from=manifests /manifests/ ./
RUN npm ci --omit=dev --ignore-scripts \
  || { echo 'npm ci refused the lockfile; installing the locked versions with npm install'; \
       npm install --omit=dev --ignore-scripts; } \
  && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
# Manifests, root node_modules (with the @sps/* workspace links) and any workspace's own node_modules.
COPY --from=prod-deps /app/ ./
# Compiled code of every workspace, the generated Prisma client inside packages/db/dist.
COPY --from=build /dist/ ./
# What `npm run db:migrate` reads, and `node scripts/start-all.js` (all processes in one container).
COPY prisma ./prisma
COPY scripts ./scripts
# Fails the build when production dependencies miss something the compiled packages import.
RUN node --input-type=module -e "await Promise.all(['@sps/core','@sps/db','@sps/queue','@sps/networks','@sps/storage','@sps/safe-fetch'].map((m) => import(m)))"
# MEDIA_STORAGE=fs keeps uploads (and unfinished tus uploads) under ./data/media: the only path the service
# writes to, owned by `node`; docker-compose mounts a volume there shared by the API replicas and the publisher.
RUN mkdir -p /app/data/media && chown node:node /app/data/media
# Code stays owned by root (read-only for the service); the processes run as the image's `node` user.
USER node
EXPOSE 3000 9101 9102
CMD ["node", "apps/api/dist/main.js"]
