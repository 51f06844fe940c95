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

# regress/harness/ceph.sh: a throwaway one-node Ceph (mon, one memstore
# -- or, with CEPH_STORE=bluestore, a sparse 20 GiB file for objects of
# several GiB --
# OSD, radosgw) serving S3 on 127.0.0.1, for the tests.  Source it, then
#
#	ceph_start DIR	start everything under DIR; exports DEPOT_S3_ENDPOINT,
#			DEPOT_S3_ACCESS_KEY, DEPOT_S3_SECRET_KEY, DEPOT_S3_REGION
#	ceph_stop DIR	stop the daemons by pid (radosgw, osd, mon)
#	ceph_empty DIR BUCKET
#			delete every object in BUCKET and have radosgw
#			free their space now, not after its two-hour
#			garbage-collection delay
#	s3_curl ARGS...	curl signing for that radosgw (SigV4, unsigned
#			payload), giving up after S3_CURL_MAX_TIME seconds
#			(default 600)
#
# CEPH_STORE=bluestore puts objects in a sparse file instead of RAM;
# CEPH_MEMSTORE_BYTES sizes the memstore (default 2 GiB).
#
# The daemons run in the foreground as children of the calling shell,
# because PID 1 on the CI machines reaps orphans late.  Written for
# POSIX sh.

# A TCP port on 127.0.0.1 that nobody listens on right now.
ceph_free_port() {
	while :; do
		p=$(( ($(od -An -N2 -tu2 /dev/urandom) % 20000) + 20000 ))
		if [ -z "$(ss -Hltn "sport = :$p" 2>/dev/null)" ]; then
			echo "$p"
			return 0
		fi
	done
}

ceph_write_conf() {	# dir fsid monport rgwport
	cat >"$1/ceph.conf" <<CONF
[global]
fsid = $2
mon host = v1:127.0.0.1:$3
auth cluster required = none
auth service required = none
auth client required = none
ms bind ipv6 = false
public addr = 127.0.0.1
run dir = $1/run
admin socket = $1/run/\$name.asok
log file = $1/log/\$name.log
keyring = $1/keyring
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon warn on pool no redundancy = false
mon data avail warn = 1
osd crush chooseleaf type = 0
osd mon shutdown timeout = 0.5
osd crush update on start = false
osd class update on start = false
[mon]
mon data = $1/mon/ceph-\$id
[osd]
osd data = $1/osd/ceph-\$id
osd objectstore = ${CEPH_STORE:-memstore}
memstore device bytes = ${CEPH_MEMSTORE_BYTES:-2147483648}
bluestore block create = true
bluestore block size = 21474836480
bluestore cache autotune = false
bluestore cache size = 134217728
osd memory target = 1073741824
osd max object name len = 460
osd max object namespace len = 64
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$4
CONF
}

ceph_start() {
	_c=$(cd "$1" 2>/dev/null && pwd) || { mkdir -p "$1" && _c=$(cd "$1" && pwd); }
	mkdir -p "$_c/run" "$_c/log" "$_c/mon" "$_c/osd/ceph-0"
	_fsid=$(cat /proc/sys/kernel/random/uuid)
	_monport=$(ceph_free_port)
	_rgwport=$(ceph_free_port)
	while [ "$_rgwport" = "$_monport" ]; do _rgwport=$(ceph_free_port); done
	ceph_write_conf "$_c" "$_fsid" "$_monport" "$_rgwport"
	export CEPH_CONF="$_c/ceph.conf"
	ceph-authtool --create-keyring "$_c/keyring" --gen-key -n mon. \
	    --cap mon 'allow *' >/dev/null || return 1
	monmaptool --create --addv a "v1:127.0.0.1:$_monport" --fsid "$_fsid" \
	    "$_c/monmap" >/dev/null || return 1
	ceph-mon --mkfs -i a --monmap "$_c/monmap" --keyring "$_c/keyring" \
	    >>"$_c/log/stderr" 2>&1 || return 1
	ceph-mon -i a -f >>"$_c/log/stderr" 2>&1 &
	echo $! >"$_c/mon.pid"
	# Also waits for the monitor to answer.  A command sent while the
	# new monitor is still taking its monmap is refused with EPERM
	# ("handle_command on fsid 0000... != ...": seen once in a CI-like
	# run under load), so it is asked again a few times.
	_i=0
	until ceph osd create --connect-timeout 30 >/dev/null 2>&1; do
		_i=$((_i + 1))
		[ $_i -ge 5 ] && return 1
		sleep 1
	done
	# Added by hand: "crush update on start" races the monmap.
	ceph osd crush add osd.0 1 root=default >/dev/null 2>&1
	ceph-osd -i 0 --mkfs >>"$_c/log/stderr" 2>&1 || return 1
	ceph-osd -i 0 -f >>"$_c/log/stderr" 2>&1 &
	echo $! >"$_c/osd.pid"
	radosgw -n client.rgw.a -f >>"$_c/log/stderr" 2>&1 &
	echo $! >"$_c/rgw.pid"
	_url="http://127.0.0.1:$_rgwport"
	_i=0
	until curl -s -o /dev/null "$_url/"; do
		_i=$((_i + 1))
		if [ $_i -gt 300 ]; then
			echo "radosgw did not come up; see $_c/log" >&2
			return 1
		fi
		sleep 0.2
	done
	_ak=DEPOTTEST$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
	_sk=$(od -An -N20 -tx1 /dev/urandom | tr -d ' \n')
	timeout 60 radosgw-admin user create --uid=depottest \
	    --display-name=depottest --access-key="$_ak" \
	    --secret-key="$_sk" >/dev/null 2>&1 || return 1
	export DEPOT_S3_ENDPOINT="$_url"
	export DEPOT_S3_ACCESS_KEY="$_ak"
	export DEPOT_S3_SECRET_KEY="$_sk"
	export DEPOT_S3_REGION=us-east-1
	return 0
}

# kill -0 succeeds on a zombie, and zombies linger here: Z counts as gone.
ceph_gone() {
	! kill -0 "$1" 2>/dev/null && return 0
	case "$(ps -o stat= -p "$1" 2>/dev/null)" in
	Z*)	return 0 ;;
	esac
	return 1
}

ceph_stop() {
	for _d in rgw osd mon; do
		_p=$(cat "$1/$_d.pid" 2>/dev/null) || continue
		kill "$_p" 2>/dev/null
		_i=0
		while [ $_i -lt 100 ] && ! ceph_gone "$_p"; do
			sleep 0.05
			_i=$((_i + 1))
		done
		ceph_gone "$_p" || kill -9 "$_p" 2>/dev/null
		rm -f "$1/$_d.pid"
	done
	return 0
}

ceph_empty() {
	for _k in $(s3_curl "$DEPOT_S3_ENDPOINT/$2" |
	    grep -o '<Key>[^<]*' | cut -c6-); do
		s3_curl -X DELETE "$DEPOT_S3_ENDPOINT/$2/$_k"
	done
	CEPH_CONF=$1/ceph.conf timeout 120 radosgw-admin gc process \
	    --include-all >/dev/null 2>&1
}

s3_curl() {
	curl -s --max-time "${S3_CURL_MAX_TIME:-600}" --aws-sigv4 "aws:amz:us-east-1:s3" \
	    --user "$DEPOT_S3_ACCESS_KEY:$DEPOT_S3_SECRET_KEY" \
	    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}
