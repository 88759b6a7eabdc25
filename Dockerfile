# codemux, packed: the CLI tarball `pnpm pack:all` writes, installed on a slim Node 20 as a non-root user.
# Built and run nowhere yet (this repository's CI has no Docker daemon); see docs/scale-out.md.
FROM node:20-bookworm-slim AS pack
WORKDIR /src
RUN corepack enable
COPY . .
RUN pnpm install --frozen-lockfile && pnpm build && pnpm pack:all

FROM node:20-bookworm-slim
ENV NODE_ENV=production CODEMUX_HOME=/home/node/.codemux
# Only the CLI's tarball: it bundles the @codemux libraries; its other dependencies come from the registry.
COPY --from=pack /src/dist/packages/codemux-[0-9]*.tgz /tmp/
RUN npm install --global /tmp/codemux-*.tgz && rm /tmp/codemux-*.tgz
USER node
WORKDIR /home/node
EXPOSE 3920
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:3920/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["codemux", "serve", "--http", "0.0.0.0:3920"]
