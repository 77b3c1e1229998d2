# syntax=docker/dockerfile:1
# The arc-reaper agent (src/agent): the in-cluster half of CLUSTER_MODE=agent.
#   docker build -t REGISTRY/arc-reaper-agent:0.2.0 .
# Node 24 runs the TypeScript as it is (type stripping), so there is no build
# step. Only production dependencies are installed. The image runs as uid 1000,
# owns none of its files and writes nothing, so it runs with a read-only root
# filesystem (see infra/agent/base/deployment.yaml).
# `npm run images` (scripts/images) builds it here with buildah, on stand-in bases (docs/images.md).
#
# The base, pinned by its manifest list's digest (every platform's image under it): a
# build fails if the digest is wrong or the tag moved away from it. To refresh both
# (a new Node 24 patch release, with package.json's `node` devDependency):
#   docker buildx imagetools inspect node:<version>-slim   # its "Digest:" line
# NODE_BASE and NODE_DIGEST also fill the image's base.name and base.digest labels.
ARG NODE_BASE=docker.io/library/node:24.21.0-slim
ARG NODE_DIGEST=sha256:0e0ff40c39bc087845bfb27465a0df4ea419520094bc35842ff83dd8cbe6f9b6
ARG NODE_IMAGE=${NODE_BASE}@${NODE_DIGEST}

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=optional too: TypeScript is valibot's optional peer (31 MB with its native
# binary) and nothing else of the agent's dependencies is optional; the agent never
# loads it (test/node/agent/agent-dockerfile.test.ts derives the set from the lock file).
RUN npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

# The agent's stage, named so that a build (the release workflow's `target: agent`) keeps
# making this image whatever stage is added after it.
FROM ${NODE_IMAGE} AS agent
# The release passes VERSION (package.json's) and REVISION (the commit); so does `npm run images`.
ARG VERSION=dev
ARG REVISION=unknown
ARG NODE_BASE
ARG NODE_DIGEST
LABEL org.opencontainers.image.title="arc-reaper-agent" \
      org.opencontainers.image.description="arc-reaper's in-cluster agent: carries the cluster calls for CLUSTER_MODE=agent" \
      org.opencontainers.image.source="https://github.com/arc-reaper/arc-reaper" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.base.name="${NODE_BASE}" \
      org.opencontainers.image.base.digest="${NODE_DIGEST}"
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# Only what .dockerignore lets in: src/agent and the files it shares with the Worker, listed there once.
COPY src ./src
USER 1000:1000
ENTRYPOINT ["node", "src/agent/main.ts"]
