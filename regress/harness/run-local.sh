#!/bin/sh
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

# run-local.sh: `make run'.  depotd in the foreground on 127.0.0.1:8080
# with everything under ./var: a private PostgreSQL cluster, local
# storage, the control socket, and an API key and an admin key made on
# the first run (random, kept in ./var, printed with the URL).
# ^C or SIGTERM stops depotd and PostgreSQL.  DEPOT_RUN_VAR and
# DEPOT_RUN_PORT move it elsewhere (the secrets suite runs it so).
#
# DEPOT_UPSTREAM=URL (a model server's base URL, with its /v1) adds an
# upstream and one model: DEPOT_MODEL names it, at depotd and at the
# upstream alike (default "default"), DEPOT_UPSTREAM_API is openai or
# anthropic (default openai), DEPOT_UPSTREAM_KEY its key, if it needs
# one (written to the mode 600 configuration, never to the
# environment of depotd's processes).

top=$(cd "$(dirname "$0")/../.." && pwd)
var=${DEPOT_RUN_VAR:-$top/var}

# A value inside the configuration's double quotes.
conf_quote() {
	printf '%s' "$1" | sed 's/[\\"]/\\&/g'
}

# The upstream and model lines from DEPOT_UPSTREAM*, or nothing.
model_lines() {
	local api=${DEPOT_UPSTREAM_API:-openai} url=$DEPOT_UPSTREAM
	case $api in
	openai|anthropic) ;;
	*) echo "DEPOT_UPSTREAM_API must be openai or anthropic" >&2
	   return 1 ;;
	esac
	case $url in
	http://*|https://*) ;;
	*) echo "DEPOT_UPSTREAM must be an http:// or https:// URL" >&2
	   return 1 ;;
	esac
	printf 'upstream "upstream" {\n\turl "%s"\n\tapi %s\n' \
	    "$(conf_quote "$url")" "$api"
	[ -n "$upstream_key" ] &&
	    printf '\tapi-key "%s"\n' "$(conf_quote "$upstream_key")"
	printf '}\nmodel "%s" upstream "upstream"\n' \
	    "$(conf_quote "$model")"
}

model=${DEPOT_MODEL:-default}
# Kept out of the environment depotd's processes inherit.
upstream_key=${DEPOT_UPSTREAM_KEY:-}
unset DEPOT_UPSTREAM_KEY
models=
if [ -n "${DEPOT_UPSTREAM:-}" ]; then
	models=$(model_lines) || exit 1
fi

# PostgreSQL and depotd's unprivileged children must be able to enter
# ./var.  A checkout that only root may enter (one under /root, which
# is 0700) keeps its state in /var/lib/depotd-run instead, with ./var a
# link to it; its path is resolved, so that nobody has to pass /root.
var_outside() {
	local dir
	dir=/var/lib/depotd-run/$(printf '%s' "$top" | cksum | cut -d' ' -f1)
	mkdir -p -m 755 /var/lib/depotd-run "$dir" || exit 1
	if [ -d "$var" ]; then
		cp -a "$var/." "$dir/" && rm -rf "$var" || exit 1
	fi
	ln -s "$dir" "$var" || exit 1
	echo "./var links to $dir: postgres cannot enter $top"
}
if [ ! -L "$var" ] && [ "$(id -u)" -eq 0 ] &&
    ! runuser -u postgres -- test -x "$top"; then
	var_outside
fi
mkdir -p "$var" && var=$(cd "$var" && pwd -P) || exit 1
port=${DEPOT_RUN_PORT:-8080}
. "$top/regress/harness/pg.sh"
. "$top/regress/harness/depotd.sh"

cleanup() {
	trap - INT TERM EXIT
	depot_stop
	pg_stop "$var/pg"
	echo "depotd and PostgreSQL stopped."
	exit 0
}

mkdir -p "$var"
pg_start "$var/pg" || exit 1
trap cleanup INT TERM EXIT
depot_user
# Never the harness's public test key: a random one per ./var.
if [ ! -s "$var/admin-key" ]; then
	(umask 077; printf 'dpt-admin-%s\n' "$(od -An -N24 -tx1 /dev/urandom |
	    tr -d ' \n')" >"$var/admin-key")
fi
# Read by depot_conf, and never exported: depotd's processes would
# inherit it in their environment.
unset DEPOT_ADMIN_KEY
DEPOT_ADMIN_KEY=$(cat "$var/admin-key")
[ -n "$DEPOT_ADMIN_KEY" ] || { echo "no admin key in $var" >&2; exit 1; }
DEPOT_SANDBOX_LOCAL=1 DEPOT_MAX_SIZE=512M DEPOT_SWEEP=1h \
    depot_conf "$var" "$port" "$models"
upstream_key=
: >"$var/depotd.log"
depot_start "$var" || { cat "$var/depotd.log"; exit 1; }

if [ ! -s "$var/api-key" ]; then
	(umask 077; depot_key local default >"$var/api-key")
fi
key=$(cat "$var/api-key")
[ -n "$key" ] || { echo "could not create an API key" >&2; exit 1; }

cat <<MSG
DEPOT_BASE_URL=http://127.0.0.1:$port
DEPOT_API_KEY=$key
DEPOT_ADMIN_KEY=$DEPOT_ADMIN_KEY
MSG
[ -n "$models" ] && cat <<MSG
DEPOT_MODEL=$model	(via $DEPOT_UPSTREAM, api ${DEPOT_UPSTREAM_API:-openai})
MSG
cat <<MSG

Try:
  echo hello > hello.txt
  curl -H "Authorization: Bearer $key" -F purpose=user_data \\
      -F file=@hello.txt http://127.0.0.1:$port/v1/files
  build/depotctl -s $var/run/depotd.sock show status

depotd logs below; ^C stops it.
MSG
tail -n +1 -f "$var/depotd.log" --pid="$DEPOT_PID" &
wait "$DEPOT_PID"
