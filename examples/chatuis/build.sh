#!/usr/bin/env bash
# Rebuilds the chat front-end bundles that examples/chatuistand serves
# (examples/chatuistand/bundles/*.js, *.css) from the npm packages pinned
# in package-lock.json. The bundles are committed, so `make test` needs no
# npm; run this after a version change in package.json (then `npm
# install` updates the lock). Each src/ entry only mounts its UI and
# connects its streaming hook to the stand-in's bot; antdx and tdesign
# are reasoning pages (the bot's ?sse=openai stream, see
# examples/chatuistand/reasoning.go).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
out=../chatuistand/bundles
mkdir -p "$out"
for e in src/nlux.js src/deepchat.js src/chatscope.jsx src/chatbotify.jsx src/assistantui.jsx src/chatui.jsx src/antdx.jsx src/tdesign.jsx; do
  n=$(basename "${e%.*}")
  npx esbuild "$e" --bundle --minify --format=iife --target=chrome110 \
    --legal-comments=none --conditions=production --define:process.env.NODE_ENV='"production"' \
    --loader:.svg=dataurl --loader:.woff=dataurl --loader:.woff2=dataurl --loader:.ttf=dataurl --loader:.png=dataurl \
    --outfile="$out/$n.js"
done
ls -l "$out"
