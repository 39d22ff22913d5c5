#!/usr/bin/env bash
# Rebuilds the upload component the chat stand-in serves
# (examples/chatstand/uploader/dropzone.js) from the npm packages pinned in
# package-lock.json. The bundle is committed, so `make test` needs no npm;
# run this after a version change in package.json (then `npm install`
# updates the lock).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
out=../chatstand/uploader
mkdir -p "$out"
npx esbuild src/dropzone.js --bundle --minify --format=iife --target=chrome110 \
  --legal-comments=none --outfile="$out/dropzone.js"
ls -l "$out"
