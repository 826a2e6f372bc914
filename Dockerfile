# Three stages. `build` installs everything and compiles; docker-compose also runs the local chain from it,
# because the chain needs development tools (anvil, Circle's contract artifacts). `production-deps` prunes
# that tree to the production dependencies and drops the TypeScript sources. The final, runtime image holds
# only those dependencies, the compiled apps and the migrations, and runs as the unprivileged `node` user;
# its command picks the role (api by default, worker, migrations).
FROM node:20-bookworm-slim AS build
# pkcs11js (the PKCS#11 signer, packages/signers) compiles its native module at install: node-gyp needs these
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.base.json tsconfig.json prisma.config.ts ./
COPY prisma ./prisma
COPY packages ./packages
COPY apps ./apps
# the root tsconfig builds the benchmarks too
COPY bench ./bench
# npm install, not npm ci: a lockfile made on linux-x64 lacks other platforms' optional packages (docs/decisions.md)
RUN npm install --no-audit --no-fund && npm run build

FROM build AS production-deps
# no lifecycle scripts: the Prisma client is already generated and compiled into packages/db/dist
RUN npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
 && find packages apps -mindepth 2 -maxdepth 2 \( -name src -o -name '*.tsbuildinfo' -o -name 'tsconfig*.json' \) -exec rm -rf {} +

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=production-deps /app/package.json /app/package-lock.json ./
COPY --from=production-deps /app/node_modules ./node_modules
COPY --from=production-deps /app/packages ./packages
COPY --from=production-deps /app/apps ./apps
# the migration runner finds prisma/migrations by walking up from packages/db/dist
COPY --from=production-deps /app/prisma/migrations ./prisma/migrations
# files stay owned by root: the service can read its code but not change it
USER node
EXPOSE 4020
CMD ["node", "apps/api/dist/main.js"]
