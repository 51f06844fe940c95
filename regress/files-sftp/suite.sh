#!/bin/sh
# regress/files-sftp/suite.sh: the Files API suite (regress/files) with the
# sftp store, so that make check runs it against every backend.
top=$(cd "$(dirname "$0")/../.." && pwd)
DEPOT_STORE=sftp exec sh "$top/regress/files/suite.sh"
