#!/usr/bin/env bash
# Regenerates the dialect and pass references from ODS and copies it into docs/reference.
# test/Docs/generated_docs_current.test fails when the copies are stale.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BRAID_BUILD_DIR:-build}
bash scripts/build.sh --target braid-doc >/dev/null
cp "$BUILD_DIR/docs/Dialects/BraidDialect.md" docs/reference/BraidDialect.md
cp "$BUILD_DIR/docs/BraidPasses.md" docs/reference/BraidPasses.md
echo "updated docs/reference/BraidDialect.md and docs/reference/BraidPasses.md"
