#!/bin/sh
# regress/sdk-sftp/suite.sh: regress/sdk/suite.sh with the sftp store.
DEPOT_STORE=sftp exec sh "$(dirname "$0")/../sdk/suite.sh"
