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
#
# regress/harness/upstream.sh: the scripted upstream model
# (regress/upstream/double.py, contract in regress/upstream/CONTRACT.md)
# for suites that point depotd's model routes at it.  Sourced, with
# $top the checkout, not run:
#
#	upstream_start DIR PORT	start the double on 127.0.0.1:PORT, its
#				output in DIR/double.{out,err}; waits for
#				it to listen; UPSTREAM_PID, UPSTREAM_URL set
#	upstream_stop		SIGTERM and wait
#	upstream_script JSON	append turns: JSON is the "turns" array
#	upstream_reset		clear the turns and the log
#	upstream_log		the log, as JSON, on stdout

UPSTREAM_PYTHON=${UPSTREAM_PYTHON:-python3}

upstream_start() {	# dir port
	local i=0
	mkdir -p "$1" || return 1
	"$UPSTREAM_PYTHON" "$top/regress/upstream/double.py" --port "$2" \
	    >"$1/double.out" 2>"$1/double.err" &
	UPSTREAM_PID=$!
	UPSTREAM_URL=http://127.0.0.1:$2
	# 30 s: the pyenv shim alone can take seconds on a busy machine.
	while [ $i -lt 300 ]; do
		grep -q "^listening $2\$" "$1/double.out" 2>/dev/null &&
		    return 0
		kill -0 "$UPSTREAM_PID" 2>/dev/null || return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

upstream_stop() {
	[ -n "${UPSTREAM_PID:-}" ] || return 0
	kill "$UPSTREAM_PID" 2>/dev/null
	wait "$UPSTREAM_PID" 2>/dev/null
	UPSTREAM_PID=
}

upstream_script() {	# turns-json
	curl -fsS -o /dev/null -X POST --data-binary "{\"turns\":$1}" \
	    "$UPSTREAM_URL/__script"
}

upstream_reset() {
	curl -fsS -o /dev/null -X POST "$UPSTREAM_URL/__reset"
}

upstream_log() {
	curl -fsS "$UPSTREAM_URL/__log"
}
