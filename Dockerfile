# One image for every Bulwark workload. The first argument picks the program:
#   gateway | permission-server | init | edge-health | cli ...   (default: init, the injected init container)
# The Pepr module's controllers run Pepr's own controller image; `npm run build -- --image` tells
# them to inject this one.
#
#   docker build -t REGISTRY/bulwark:TAG .
#   npm run build -- --image REGISTRY/bulwark:TAG     # manifests/ pointing at it

# The Node.js release the image runs: Node 24, the Active LTS line (Node 20 reached end of life on
# 2026-04-30). The entrypoint test and the gateway benchmark fetch this exact version
# (hack/node-runtime/fetch.sh), so what they run is what the image runs.
ARG NODE_VERSION=24.22.3

# ---- build: all dependencies, the Pepr build (type-checks the project and bundles the module),
# the package: `npm pack` runs prepack (packaging/compile.ts), which compiles each program into a
# JavaScript bundle in build/, and packs bin/ and build/ (package.json "files"), no TypeScript.
FROM node:${NODE_VERSION}-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && npm pack --pack-destination /tmp \
 && mv /tmp/bulwark-*.tgz /tmp/bulwark.tgz

# Start-up and size against the former tsx image: docs/install.md ("The image, in detail"); e.g.
# the gateway is ready 1.1 s after spawn instead of 7.2 s, production node_modules 128 MB not 233 MB.
# ---- runtime: production dependencies from the lockfile (Pepr, tsx and TypeScript are dev
# dependencies: no program here imports them), the packed files, a non-root user. Plain `node`
# runs the compiled bundles; nothing is compiled at start-up and nothing writes to a temp folder,
# so the root file system can be read-only with no /tmp.
FROM node:${NODE_VERSION}-slim AS runtime
ENV NODE_ENV=production \
    NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force
# Exactly the files `npm pack` ships (package.json "files"), which the entrypoint test installs.
COPY --from=build /tmp/bulwark.tgz /tmp/bulwark.tgz
RUN tar -xzf /tmp/bulwark.tgz --strip-components=1 -C /app --no-same-owner \
 && rm /tmp/bulwark.tgz \
 && chmod -R a+rX /app
# node:*-slim's `node` user (UID 1000); the injected init container runs as 65532, which only
# needs to read /app.
USER 1000:1000
ENTRYPOINT ["node", "/app/bin/bulwark.js"]
CMD ["init"]
