# syntax=docker/dockerfile:1
# Image for spiderpool-iaas-webhook. Build: docker build -t spiderpool-iaas-webhook:0.1.0 .
ARG NODE_IMAGE=node:20-bookworm-slim

# --- build: full dependency tree, compile TypeScript to dist/ ----------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# --- production dependencies only ---------------------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

# --- runtime -------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Files stay owned by root and read-only for the runtime user; the pod also runs with
# readOnlyRootFilesystem. package.json is needed for "type": "module".
COPY package.json ./
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# `register` applies this manifest (its one source), reading it relative to dist/.
COPY deploy/base/validatingwebhookconfiguration.yaml ./deploy/base/
# uid/gid 1000 is the base image's `node` user. Numeric, so the kubelet can verify
# runAsNonRoot; deploy/base/deployment.yaml sets the same runAsUser/runAsGroup.
USER 1000:1000
EXPOSE 8443
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["serve"]
