# codemux in a container: the CLI packed as it is published, installed with npm on a slim Node image, run as a non-root user.
# Build: docker build -t codemux .   Run: docker run -p 3920:3920 -e CODEMUX_TOKEN=me:$(openssl rand -hex 32) codemux
# See docs/deploy.md (compose with Redis and nginx, Kubernetes).

FROM node:20-bookworm-slim AS build
WORKDIR /src
RUN npm install --global pnpm@10
COPY . .
RUN pnpm install --frozen-lockfile \
 && pnpm --filter codemux... build \
 && mkdir /out \
 && cd apps/cli && pnpm pack --pack-destination /out

FROM node:20-bookworm-slim
# What this stage installs and starts is deploy/image/codemux-image.sh: the deploy suite runs it too, with the
# USER, ENTRYPOINT, CMD and HEALTHCHECK below (scripts/test/deploy.test.mjs).
COPY deploy/image/codemux-image.sh /usr/local/bin/codemux-image
COPY --from=build /out/ /tmp/pack/
RUN codemux-image install /tmp/pack/codemux-*.tgz node:node \
 && rm -rf /tmp/pack /root/.npm
USER node
EXPOSE 3920
# /healthz is open (no token): the process answers. /readyz says whether it takes traffic.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3920/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# codemux ARGS in /data (the built-in filesystem server's root: mount a volume, or a config of your own with
# CODEMUX_CONFIG), its home /home/node/.codemux. A token is required off loopback: pass CODEMUX_TOKEN=name:secret
# or mount a --token-file.
ENTRYPOINT ["codemux-image", "start"]
CMD ["serve", "--http", "0.0.0.0:3920"]
