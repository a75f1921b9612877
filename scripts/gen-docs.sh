#!/usr/bin/env bash
# Regenerates the dialect and pass references from ODS and copies them into docs/reference.
# test/Docs/generated_docs_current.test fails when the copies are stale.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BRAID_BUILD_DIR:-build}
bash scripts/build.sh --target braid-doc >/dev/null
cp "$BUILD_DIR/docs/Dialects/BraidDialect.md" docs/reference/BraidDialect.md
for stage in Sharding Training CoOpt Conversion; do
  cp "$BUILD_DIR/docs/Braid${stage}Passes.md" "docs/reference/Braid${stage}Passes.md"
done
echo "updated docs/reference: BraidDialect.md, BraidShardingPasses.md, BraidTrainingPasses.md, BraidCoOptPasses.md, BraidConversionPasses.md"
