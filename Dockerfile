# syntax=docker/dockerfile:1
# The arc-reaper agent (src/agent): the in-cluster half of CLUSTER_MODE=agent.
#   docker build -t REGISTRY/arc-reaper-agent:0.2.0 .
# Node 24 runs the TypeScript as it is (type stripping), so there is no build
# step. Only production dependencies are installed. The image runs as uid 1000,
# owns none of its files and writes nothing, so it runs with a read-only root
# filesystem (see infra/agent/base/deployment.yaml).
ARG NODE_IMAGE=node:24.21.0-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# The agent's stage, named so that a build (the release workflow's `target: agent`) keeps
# making this image whatever stage is added after it.
FROM ${NODE_IMAGE} AS agent
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
# Only what .dockerignore lets in: src/agent and the files it shares with the Worker, listed there once.
COPY src ./src
USER 1000:1000
ENTRYPOINT ["node", "src/agent/main.ts"]
