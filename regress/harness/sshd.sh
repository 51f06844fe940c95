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

# regress/harness/sshd.sh: a private sshd for the SFTP store tests.
#
# Sourced, not run.  sshd_start DIR starts a second /usr/sbin/sshd -D
# on 127.0.0.1 with its own ed25519 host key and internal-sftp, serving
# a test user whose store root is DIR/store.  It exports:
#
#	DEPOT_SFTP_URL			sftp://user@127.0.0.1:PORT/DIR/store
#	DEPOT_SFTP_ROOT			DIR/store (the same path, seen locally)
#	DEPOT_SFTP_IDENTITY		an unencrypted ed25519 client key
#	DEPOT_SFTP_IDENTITY_ENC		the same kind of key, encrypted
#	DEPOT_SFTP_PASSPHRASE		the passphrase of the encrypted key
#	DEPOT_SFTP_KNOWN_HOSTS		a known_hosts line for [127.0.0.1]:PORT
#	DEPOT_SFTP_KNOWN_HOSTS_BAD	the same host with another key
#	DEPOT_SFTP_DIR, DEPOT_SFTP_HARNESS  so a test can stop and restart
#
# Calling sshd_start again on the same DIR reuses its keys and port, so
# a client that knew the server before sees the same host key.
# sshd_stop DIR stops the server and every connection it forked;
# sshd_freeze DIR and sshd_thaw DIR stop and resume the connections.

SSHD_USER=${SSHD_USER:-depotsftp}
SSHD_HARNESS_FILE=${SSHD_HARNESS_FILE:-$(pwd)/regress/harness/sshd.sh}

sshd_user() {
	id "$SSHD_USER" >/dev/null 2>&1 ||
	    useradd -m -s /bin/sh "$SSHD_USER" || return 1
	# useradd leaves the account locked ('!'), which sshd refuses.
	usermod -p '*' "$SSHD_USER"
}

sshd_keys() {	# dir
	d=$1
	[ -f "$d/host_ed25519" ] && return 0
	ssh-keygen -q -t ed25519 -N '' -C depot-host -f "$d/host_ed25519" &&
	ssh-keygen -q -t ed25519 -N '' -C depot-other -f "$d/other_ed25519" &&
	ssh-keygen -q -t ed25519 -N '' -C depot-client \
	    -f "$d/client_ed25519" &&
	ssh-keygen -q -t ed25519 -N 'correct horse battery' \
	    -C depot-client-enc -f "$d/client_enc_ed25519" || return 1
	echo 'correct horse battery' > "$d/passphrase"
	cat "$d/client_ed25519.pub" "$d/client_enc_ed25519.pub" \
	    > "$d/authorized_keys"
	mkdir -p "$d/store"
	chown "$SSHD_USER" "$d/store"
	chmod 755 "$d"
}

sshd_config() {	# dir port
	cat > "$1/sshd_config" <<EOF
Port $2
ListenAddress 127.0.0.1
HostKey $1/host_ed25519
PidFile none
AuthorizedKeysFile $1/authorized_keys
StrictModes no
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AllowUsers $SSHD_USER
Subsystem sftp internal-sftp
LogLevel VERBOSE
EOF
}

# Try to bring sshd up on port $2; 0 once it listens.
sshd_try_port() {	# dir port
	d=$1
	sshd_config "$d" "$2"
	/usr/sbin/sshd -t -f "$d/sshd_config" || return 1
	: > "$d/sshd.log"
	/usr/sbin/sshd -D -e -f "$d/sshd_config" 2>>"$d/sshd.log" &
	echo $! > "$d/sshd.pid"
	i=0
	while [ $i -lt 100 ]; do
		if grep -q "Server listening on 127.0.0.1 port $2" \
		    "$d/sshd.log"; then
			echo "$2" > "$d/port"
			return 0
		fi
		sshd_alive "$(cat "$d/sshd.pid")" || break
		sleep 0.05
		i=$((i + 1))
	done
	sshd_kill_pid "$(cat "$d/sshd.pid")"
	return 1
}

sshd_exports() {	# dir
	d=$1
	port=$(cat "$d/port")
	printf '[127.0.0.1]:%s %s\n' "$port" \
	    "$(cut -d' ' -f1,2 "$d/host_ed25519.pub")" > "$d/known_hosts"
	printf '[127.0.0.1]:%s %s\n' "$port" \
	    "$(cut -d' ' -f1,2 "$d/other_ed25519.pub")" > "$d/known_hosts_bad"
	export DEPOT_SFTP_URL="sftp://$SSHD_USER@127.0.0.1:$port$d/store"
	export DEPOT_SFTP_ROOT="$d/store"
	export DEPOT_SFTP_IDENTITY="$d/client_ed25519"
	export DEPOT_SFTP_IDENTITY_ENC="$d/client_enc_ed25519"
	export DEPOT_SFTP_PASSPHRASE="$(cat "$d/passphrase")"
	export DEPOT_SFTP_KNOWN_HOSTS="$d/known_hosts"
	export DEPOT_SFTP_KNOWN_HOSTS_BAD="$d/known_hosts_bad"
	export DEPOT_SFTP_DIR="$d"
	export DEPOT_SFTP_HARNESS="$SSHD_HARNESS_FILE"
}

sshd_start() {	# dir
	d=$1
	mkdir -p /run/sshd && chmod 755 /run/sshd
	sshd_user || return 1
	sshd_keys "$d" || return 1
	if [ -f "$d/port" ]; then
		# A restart: the clients know this port and host key.
		n=0
		until sshd_try_port "$d" "$(cat "$d/port")"; do
			n=$((n + 1))
			[ $n -ge 20 ] && return 1
			sleep 0.2
		done
	else
		n=0
		until sshd_try_port "$d" $((20000 + $(od -An -N2 -tu2 \
		    /dev/urandom) % 40000)); do
			n=$((n + 1))
			[ $n -ge 10 ] && return 1
		done
	fi
	sshd_exports "$d"
}

sshd_alive() {	# pid; a zombie counts as dead
	[ -n "$1" ] && [ -r "/proc/$1/stat" ] || return 1
	state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
	[ -n "$state" ] && [ "$state" != Z ]
}

sshd_kill_pid() {	# pid
	pid=$1
	sshd_alive "$pid" || return 0
	kill "$pid" 2>/dev/null
	i=0
	while sshd_alive "$pid" && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	sshd_alive "$pid" && kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

sshd_descendants() {	# pid
	for c in $(pgrep -P "$1" 2>/dev/null); do
		# dash has no local variables: print before recursing.
		echo "$c"
		sshd_descendants "$c"
	done
}

sshd_stop() {	# dir
	d=$1
	[ -f "$d/sshd.pid" ] || return 0
	pid=$(cat "$d/sshd.pid")
	# Connections live in descendants of the listener; they would
	# outlive it and keep serving a client that should see the loss.
	for c in $(sshd_descendants "$pid"); do
		kill -9 "$c" 2>/dev/null
	done
	sshd_kill_pid "$pid"
	rm -f "$d/sshd.pid"
}

# Stop (SIGSTOP) or resume the connections, not the listener: a server
# that accepts new clients but no longer answers the old ones.
sshd_freeze() {	# dir
	for c in $(sshd_descendants "$(cat "$1/sshd.pid")"); do
		kill -STOP "$c" 2>/dev/null
	done
	return 0
}

sshd_thaw() {	# dir
	for c in $(sshd_descendants "$(cat "$1/sshd.pid")"); do
		kill -CONT "$c" 2>/dev/null
	done
	return 0
}
