#!/bin/sh
# regress/sdk-s3/suite.sh: regress/sdk/suite.sh with the s3 store.
DEPOT_STORE=s3 exec sh "$(dirname "$0")/../sdk/suite.sh"
