#!/bin/sh
# regress/files-s3/suite.sh: the Files API suite (regress/files) with the
# s3 store, so that make check runs it against every backend.
top=$(cd "$(dirname "$0")/../.." && pwd)
DEPOT_STORE=s3 exec sh "$top/regress/files/suite.sh"
