#!/usr/bin/env bash
# Copies HEAD plus the named working-tree files into .snap/new (and HEAD alone into
# .snap/old), so that a device call builds exactly those changes while other work in
# progress stays behind. .snap is ignored (.git/info/exclude); name it in the call's carry.
#   scripts/snapshot_for_device.sh FILE...
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
rm -rf .snap && mkdir -p .snap/old .snap/new
git archive HEAD | tar -x -C .snap/old
git archive HEAD | tar -x -C .snap/new
for f in "$@"; do mkdir -p ".snap/new/$(dirname "$f")" && cp "$f" ".snap/new/$f"; done
