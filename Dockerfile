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
ENV NODE_ENV=production \
    CODEMUX_HOME=/home/node/.codemux
COPY --from=build /out/ /tmp/pack/
# The tarball's own dependencies come from the npm registry, as they do for `npm install -g codemux`.
RUN npm install --global --omit=dev /tmp/pack/codemux-*.tgz \
 && rm -rf /tmp/pack /root/.npm \
 && mkdir -p /data /home/node/.codemux \
 && chown -R node:node /data /home/node/.codemux
USER node
# The built-in default servers' filesystem root; mount a volume or a config of your own (CODEMUX_CONFIG).
WORKDIR /data
EXPOSE 3920
# /healthz is open (no token): the process answers. /readyz says whether it takes traffic.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3920/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# A token is required off loopback: pass CODEMUX_TOKEN=name:secret or mount a --token-file.
ENTRYPOINT ["codemux"]
CMD ["serve", "--http", "0.0.0.0:3920"]
