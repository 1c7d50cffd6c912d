# syntax=docker/dockerfile:1
# Image for spiderpool-iaas-webhook, on Node 24 LTS (package.json "engines": Node 20.19+
# and 24 are supported; 24 is what the image ships).
#   docker build -t spiderpool-iaas-webhook:0.1.0 .
# NODE_IMAGE runs the build stages (it needs npm); NODE_RUNTIME_IMAGE is the base of the
# image itself, which needs only `node` and the user 1000. Both default to the official
# image; CI builds both from Debian packages instead (image/base.sh, image/build.sh).
ARG NODE_IMAGE=node:24-trixie-slim
ARG NODE_RUNTIME_IMAGE=node:24-trixie-slim

# --- build: full dependency tree, compile TypeScript to dist/ ----------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# No source maps or type declarations in the image (ours here, the dependencies' below):
# nothing there reads them.
RUN npx tsc -p tsconfig.build.json --sourceMap false --declaration false --incremental false

# --- production dependencies only ---------------------------------------------------
FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && \
    find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \) -delete

# --- compile cache: V8's code for every module, made by the runtime user ---------------
# Node names the cache's folder after its version, the V8 flags and the uid, and keys each
# entry by the file's path: the same base, files at the same paths, user 1000
# (image/compile-cache.mjs; docs/adr/0022-compile-cache.md).
FROM ${NODE_RUNTIME_IMAGE} AS compile-cache
WORKDIR /app
COPY --chown=0:0 package.json ./
COPY --chown=0:0 --from=prod-deps /app/node_modules ./node_modules
COPY --chown=0:0 --from=build /app/dist ./dist
COPY --chown=0:0 image/compile-cache.mjs /tmp/compile-cache.mjs
USER 1000:1000
# Node writes the entries 0600: readable by all, so that they stay readable once owned by root.
RUN NODE_COMPILE_CACHE=/tmp/compile-cache node --max-semi-space-size=8 /tmp/compile-cache.mjs /app && chmod -R a+rX,go-w /tmp/compile-cache

# --- runtime: no npm needed ----------------------------------------------------------
FROM ${NODE_RUNTIME_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Every file is owned by root and not writable by the runtime user, whatever owner ids
# the build stage's tarballs carried (npm ci as root on an old npm keeps them: nine
# files owned by uid 1000 were seen); the pod also runs with readOnlyRootFilesystem.
# test/kube/image.test.ts checks this in the built image. package.json is needed for
# "type": "module".
COPY --chown=0:0 package.json ./
COPY --chown=0:0 --from=prod-deps /app/node_modules ./node_modules
COPY --chown=0:0 --from=build /app/dist ./dist
# `register` applies this manifest (its one source), reading it relative to dist/.
COPY --chown=0:0 deploy/base/validatingwebhookconfiguration.yaml ./deploy/base/
# Read-only, like every file here (readOnlyRootFilesystem too): Node reads the entries and
# writes nothing while they match the files. Another uid finds no folder of its own and
# starts without the cache, silently.
COPY --chown=0:0 --from=compile-cache /tmp/compile-cache ./compile-cache
ENV NODE_COMPILE_CACHE=/app/compile-cache
# uid/gid 1000 is the base image's `node` user. Numeric, so the kubelet can verify
# runAsNonRoot; deploy/base/deployment.yaml sets the same runAsUser/runAsGroup.
USER 1000:1000
EXPOSE 8443
# V8's young generation at 8 MiB semi-spaces instead of Node's 16: ~20 MiB less RSS under
# load, no more CPU per review (docs/performance.md). The same flags as `npm start`.
ENTRYPOINT ["node", "--max-semi-space-size=8", "dist/cli/main.js"]
CMD ["serve"]
