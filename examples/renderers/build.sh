#!/usr/bin/env bash
# Rebuilds the Markdown renderer bundles the chat stand-in serves
# (examples/chatstand/renderers/*.js) from the npm packages pinned in
# package-lock.json. The bundles are committed, so `make test` needs no npm;
# run this after a version change in package.json (then `npm install`
# updates the lock).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
out=../chatstand/renderers
mkdir -p "$out"
for r in markdown-it marked react-markdown; do
  npx esbuild "src/$r.js" --bundle --minify --format=iife --target=chrome110 \
    --legal-comments=none --conditions=production --define:process.env.NODE_ENV='"production"' --outfile="$out/$r.js"
done
ls -l "$out"
