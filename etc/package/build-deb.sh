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

# build-deb.sh: build/depotd_<version>_<arch>.deb from a `make install'
# tree with PREFIX=/usr, plus the init script, the systemd unit, the
# documentation directory and the maintainer scripts in this directory.
#
#	sh etc/package/build-deb.sh	(what `make package' runs)
#
# VERSION overrides the version (default: from git describe, else
# 0.1.0).  The programs are compiled again in build/deb-obj: the
# install prefix is compiled into them, and build/ holds /usr/local
# objects.  Prints the path of the package on its last line.

set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
pkgdir=$top/etc/package
cd "$top"
: "${MAKE:=make}"

# Debian versions must start with a digit and, for a native package,
# carry no hyphen.
debian_version() {
	local d
	d=$(git describe --tags --always 2>/dev/null) || d=
	case $d in
	"")		echo 0.1.0 ;;
	v[0-9]*)	echo "${d#v}" | tr - + ;;
	[0-9]*.*)	echo "$d" | tr - + ;;
	*)		echo "0.1.0+git$d" ;;
	esac
}

# The package that provides one shared object, as the loader finds it.
# Debian 12 has a merged /usr, so dpkg may know the file under either
# name.
soname_package() {
	local so path p
	so=$1
	path=$(ldconfig -p | awk -v s="$so" '$1 == s { print $NF; exit }')
	[ -n "$path" ] || return 1
	for p in "$path" "$(readlink -f "$path")" "/usr$path" \
	    "/usr$(readlink -f "$path")"; do
		dpkg-query -S "$p" 2>/dev/null | sed -n '1s/:.*//p' |
		    grep . && return 0
	done
	return 1
}

# The libraries the programs load directly, mapped to their packages;
# the list below is the fallback when that mapping fails.
library_depends() {
	local so pkg list
	list=
	for so in $(for p in "$@"; do objdump -p "$p" |
	    awk '$1 == "NEEDED" { print $2 }'; done | sort -u); do
		if ! pkg=$(soname_package "$so"); then
			echo "build-deb.sh: no package for $so; using the" \
			    "fixed list" >&2
			echo "libc6 libevent-2.1-7 libpq5 libjson-c5 libssh2-1" \
			    "libcurl4 libbsd0 libssl3 libhttp-parser2.9 libseccomp2"
			return 0
		fi
		list="$list $pkg"
	done
	echo $list | tr ' ' '\n' | sort -u | tr '\n' ' '
}

VERSION=${VERSION:-$(debian_version)}
ARCH=$(dpkg --print-architecture)
OBJ=build/deb-obj
DEB=$top/build/depotd_${VERSION}_${ARCH}.deb

root=$(mktemp -d "${TMPDIR:-/tmp}/depotd-deb.XXXXXX")
trap 'rm -rf "$root"' EXIT INT TERM
chmod 755 "$root"	# it becomes /: mktemp made it private

# Under `make -jN package' the jobserver is inherited; alone, use the CPUs.
case " ${MAKEFLAGS:-} " in
*jobserver*|*" -j"*)	jobs= ;;
*)			jobs=-j$(nproc) ;;
esac
$MAKE -s $jobs B="$OBJ" PREFIX=/usr DESTDIR="$root" install >/dev/null

# Scripts and unit name the default prefix; the package installs in /usr.
install -d "$root/etc/init.d" "$root/lib/systemd/system" \
    "$root/usr/share/doc/depotd" "$root/DEBIAN"
sed 's|/usr/local/sbin/|/usr/sbin/|g' etc/depotd.sysvinit \
    >"$root/etc/init.d/depotd"
chmod 755 "$root/etc/init.d/depotd"
sed 's|/usr/local/sbin/|/usr/sbin/|g' etc/depotd.service \
    >"$root/lib/systemd/system/depotd.service"
chmod 644 "$root/lib/systemd/system/depotd.service"

cat >"$root/usr/share/doc/depotd/README.Debian" <<DOC
depotd for Debian
-----------------

The package creates the system users _depotd and _depotstore, the
local store /var/depot/files and, when absent, /etc/depotd.conf (mode
600) from /usr/share/examples/depotd/depotd.conf.  It does not enable
or start the service.  Point the "database" line at a PostgreSQL
database, check the file with "depotd -n", then:

	systemctl enable --now depotd		(systemd)
	update-rc.d depotd defaults && /etc/init.d/depotd start	(sysvinit)

depotd logs to syslog, facility daemon.  "depotctl reload" (or
"/etc/init.d/depotd reload", "systemctl reload depotd") rereads the
configuration; "dpkg --purge depotd" deletes /etc/depotd.conf and the
files stored in /var/depot/files.

See depotd(8), depotd.conf(5), depotctl(8) and depot-sandboxd(8).
DOC
git log -n 20 --format='%ad  %s' --date=short 2>/dev/null |
    gzip -9n >"$root/usr/share/doc/depotd/changelog.gz" || true
printf 'depotd\n\nCopyright the depotd developers.\n' \
    >"$root/usr/share/doc/depotd/copyright"
find "$root/usr/share/man" -type f ! -name '*.gz' -exec gzip -9n {} +

DEPENDS="$(library_depends "$root/usr/sbin/depotd" \
    "$root/usr/sbin/depotctl" "$root/usr/sbin/depot-sandboxd" |
    sed 's/ *$//; s/ /, /g'), adduser, bubblewrap, poppler-utils, python3"
SIZE=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$ARCH|" \
    -e "s|@SIZE@|$SIZE|" -e "s|@DEPENDS@|$DEPENDS|" \
    "$pkgdir/control.in" >"$root/DEBIAN/control"
for s in postinst prerm postrm; do
	install -m 755 "$pkgdir/$s" "$root/DEBIAN/$s"
done
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -print |
    sed 's|^\./||' | LC_ALL=C sort | xargs md5sum) >"$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"

dpkg-deb --build --root-owner-group "$root" "$DEB" >/dev/null
echo "$DEB"
