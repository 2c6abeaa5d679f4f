# syntax=docker/dockerfile:1
# Untested here (no Docker engine on the build machines); kept correct by reading.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
COPY packages/core/package.json packages/core/
COPY packages/db/package.json packages/db/
COPY packages/queue/package.json packages/queue/
COPY packages/networks/package.json packages/networks/
COPY apps/api/package.json apps/api/
COPY apps/publisher/package.json apps/publisher/
COPY apps/webhooks/package.json apps/webhooks/
COPY apps/admin/package.json apps/admin/
COPY apps/network-sim/package.json apps/network-sim/
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run generate && npm run build

FROM node:20-bookworm-slim AS prod-deps
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json /app/.npmrc ./
COPY --from=build /app/packages /app/packages
COPY --from=build /app/apps /app/apps
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/package.json ./
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/scripts ./scripts
COPY --from=build /app/packages ./packages
COPY --from=build /app/apps ./apps
USER node
EXPOSE 3000
CMD ["node", "apps/api/dist/main.js"]
