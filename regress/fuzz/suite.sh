#!/bin/sh
# regress/fuzz/suite.sh: the fuzz targets, briefly, as part of `make check'.
FUZZ_SECONDS=${FUZZ_SECONDS:-15}
export FUZZ_SECONDS
exec sh "$(dirname "$0")/run.sh"
