# Copyright (c) 2026 The depotd authors
#
# Permission to use, copy, modify, and distribute this software for any
# purpose with or without fee is hereby granted, provided that the above
# copyright notice and this permission notice appear in all copies.
#
# THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
# WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
# MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
# ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
# WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
# ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
# OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.

# regress/harness/store.sh: the store a suite's depotd runs on.  Source
# it after depotd.sh, with top (the source tree) and D (the suite's work
# directory) set.
#
#	store_setup KIND BUCKET	KIND file, s3 or sftp: start the store's
#				server under $D (for s3, with the bucket
#				BUCKET) and export DEPOT_STORAGE and
#				DEPOT_STORAGE_OPTS for depot_conf
#
# S3 objects go under the prefix "files/"; S3 parts are 5M, so that the
# multipart path runs on files of a few MiB.

store_setup() {	# kind bucket
	case $1 in
	file)
		;;
	s3)
		. "$top/regress/harness/ceph.sh"
		ceph_start "$D/ceph" || {
			echo "not ok - radosgw starts"
			tail -n 20 "$D/ceph/log/stderr" 2>/dev/null |
			    sed 's/^/# /'
			return 1
		}
		[ "$(s3_curl -o /dev/null -w '%{http_code}' -X PUT \
		    "$DEPOT_S3_ENDPOINT/$2")" = 200 ] || {
			echo "not ok - the bucket is created"
			return 1
		}
		DEPOT_STORAGE=s3://$2/files
		DEPOT_STORAGE_OPTS=" { endpoint \"$DEPOT_S3_ENDPOINT\" \
region \"us-east-1\" access-key \"$DEPOT_S3_ACCESS_KEY\" \
secret-key \"$DEPOT_S3_SECRET_KEY\" path-style part-size 5M }"
		;;
	sftp)
		SSHD_HARNESS_FILE=$top/regress/harness/sshd.sh
		. "$SSHD_HARNESS_FILE"
		mkdir -p "$D/sshd"
		sshd_start "$D/sshd" || {
			echo "not ok - sshd starts"
			sed 's/^/# /' "$D/sshd/sshd.log" 2>/dev/null
			return 1
		}
		# The storage helper reads the key as _depotstore.
		depot_user
		chown _depotstore "$DEPOT_SFTP_IDENTITY" || return 1
		DEPOT_STORAGE=$DEPOT_SFTP_URL
		DEPOT_STORAGE_OPTS=" { identity \"$DEPOT_SFTP_IDENTITY\" \
known-hosts \"$DEPOT_SFTP_KNOWN_HOSTS\" }"
		;;
	*)
		echo "not ok - unknown store $1"
		return 1
		;;
	esac
	export DEPOT_STORAGE DEPOT_STORAGE_OPTS
}
