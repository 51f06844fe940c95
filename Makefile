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

# depotd: top-level Makefile (GNU make).
#
#	make			build depotd, depotctl, depot-sandboxd
#	make run		run depotd on ./var (private PostgreSQL, local store)
#	make check		the whole test suite
#	make lint		a -Werror build and mandoc -Tlint -Werror
#	make install		DESTDIR= PREFIX=/usr/local
#	make package		a .deb built from the install tree
#	make fuzz		long fuzzing runs (FUZZ_SECONDS each)
#	make bench		benchmarks under regress/bench

PREFIX ?=	/usr/local
DESTDIR ?=
SBINDIR =	$(PREFIX)/sbin
MANDIR =	$(PREFIX)/share/man
EXAMPLEDIR =	$(PREFIX)/share/examples/depotd
LIBEXECDIR =	$(PREFIX)/libexec/depotd

CC ?=		cc
YACC =		bison -y
B =		build
SANITIZE ?=	0

# Looked up once per make; `run', `check' and `bench' build in a second
# make started after `deps', so that a first run on a fresh machine sees
# the libraries that `deps' has just installed.
PKGS =		libbsd-overlay libevent libpq json-c libssh2 libcurl openssl \
		libseccomp
PKG_CFLAGS :=	$(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS :=	$(shell pkg-config --libs $(PKGS) 2>/dev/null) -lhttp_parser

# The warning set of the OpenBSD daemons this project follows.  They
# stop the build only where WERROR is set: CI and `make lint' set it, so
# a newer compiler's new warning does not break a user's build.
WARNINGS =	-Wall -Wextra -Wno-unused-parameter -Wmissing-prototypes \
		-Wstrict-prototypes -Wmissing-declarations -Wshadow \
		-Wpointer-arith -Wsign-compare -Wformat=2 -Wuninitialized
WERROR ?=

CFLAGS ?=	-O2 -g
CFLAGS +=	-std=gnu11 $(WARNINGS) $(WERROR) -fstack-protector-strong \
		-D_GNU_SOURCE -Ilib $(PKG_CFLAGS) \
		-DDEPOT_LIBEXECDIR=\"$(LIBEXECDIR)\" -DDEPOT_SBINDIR=\"$(SBINDIR)\"
LDFLAGS +=	-Wl,-z,relro,-z,now
LDLIBS =	$(PKG_LIBS) -levent_openssl
ifeq ($(SANITIZE),1)
CFLAGS +=	-fsanitize=address,undefined -fno-omit-frame-pointer \
		-fno-sanitize-recover=undefined
LDFLAGS +=	-fsanitize=address,undefined
else
# ASan replaces the checked string functions; fortify only without it.
CFLAGS +=	-D_FORTIFY_SOURCE=2
endif

LIB_SRCS :=	$(wildcard lib/*.c)
LIB_OBJS :=	$(LIB_SRCS:%.c=$(B)/%.o)
LIBDEPOT =	$(B)/libdepot.a

DEPOTD_SRCS :=	$(wildcard cmd/depotd/*.c cmd/depotd/wire/*.c \
		    cmd/depotd/store/*.c)
DEPOTD_OBJS :=	$(DEPOTD_SRCS:%.c=$(B)/%.o) $(B)/cmd/depotd/parse.o
# The translators (wire/) and the stores (store/) are named from
# cmd/depotd as "wire/x.h" and "store/x.h"; they see the daemon's
# headers through -Icmd/depotd.
$(DEPOTD_OBJS): CFLAGS += -Icmd/depotd
CTL_OBJS :=	$(patsubst %.c,$(B)/%.o,$(wildcard cmd/depotctl/*.c))
$(CTL_OBJS): CFLAGS += -Icmd/depotd
SBX_OBJS :=	$(patsubst %.c,$(B)/%.o,$(wildcard cmd/depot-sandboxd/*.c))

PROGS =		$(B)/depotd $(B)/depotctl $(B)/depot-sandboxd
UNIT_SRCS :=	$(wildcard regress/unit/test_*.c)
UNIT_BINS :=	$(UNIT_SRCS:regress/unit/%.c=$(B)/regress/%)
MANS :=		$(wildcard man/*.[1-9])

# Debian packages: what the build, `make run' and `make check' need.
# `make run' installs DEPS_BUILD and DEPS_RUN only; `make deps' (and so
# check, bench and fuzz) all three.
DEPS_BUILD =	build-essential pkg-config bison libbsd-dev libevent-dev \
		libpq-dev libjson-c-dev libssh2-1-dev libcurl4-openssl-dev \
		libssl-dev libhttp-parser-dev libseccomp-dev
DEPS_RUN =	postgresql bubblewrap poppler-utils python3 python3-numpy \
		python3-pandas python3-matplotlib procps curl
DEPS_TEST =	clang libclang-rt-14-dev mandoc openssh-server \
		openssh-client rsyslog dpkg-dev fakeroot psmisc \
		ceph-mon ceph-osd ceph-common radosgw nginx-light wrk \
		iproute2 man-db systemd bc util-linux openssl
DEPS =		$(DEPS_BUILD) $(DEPS_RUN) $(DEPS_TEST)

.PHONY: all deps deps-run run check lint install package fuzz bench clean

all: $(PROGS)

# $(call apt_install,PACKAGES): installs those not installed yet.
apt_install = @missing=$$(for p in $(1); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
	    grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		    apt-get install -y -qq --no-install-recommends \
		    $$missing >/dev/null || exit 1; \
	fi

deps:
	$(call apt_install,$(DEPS))

deps-run:
	$(call apt_install,$(DEPS_BUILD) $(DEPS_RUN))

# Objects follow the flags: a SANITIZE=1 build rebuilds everything.
FLAGS_STAMP =	$(B)/.cflags
$(shell mkdir -p $(B); echo '$(CFLAGS) $(LDFLAGS)' | cmp -s - $(FLAGS_STAMP) || \
    echo '$(CFLAGS) $(LDFLAGS)' > $(FLAGS_STAMP))

$(B)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/cmd/depotd/parse.c: cmd/depotd/parse.y
	@mkdir -p $(@D)
	$(YACC) -o $@ $<

$(B)/cmd/depotd/parse.o: $(B)/cmd/depotd/parse.c $(FLAGS_STAMP)
	$(CC) $(CFLAGS) -Icmd/depotd -MMD -MP -c -o $@ $<

$(LIBDEPOT): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(B)/depotd: $(DEPOTD_OBJS) $(LIBDEPOT)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/depotctl: $(CTL_OBJS) $(B)/cmd/depotd/proto.o $(LIBDEPOT)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/depot-sandboxd: $(SBX_OBJS) $(LIBDEPOT)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Unit tests link against archives, so that each pulls in only the
# objects it uses.  depotd's own objects (less main) form libdepotd.a.
LIBDEPOTD =	$(B)/libdepotd.a
$(LIBDEPOTD): $(filter-out $(B)/cmd/depotd/depotd.o,$(DEPOTD_OBJS))
	@rm -f $@
	ar rcs $@ $^

$(B)/regress/test_%: regress/unit/test_%.c $(LIBDEPOTD) $(LIBDEPOT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Icmd/depotd -Iregress/unit $(LDFLAGS) -o $@ $^ \
	    $(LDLIBS)

# Tries, under each role's real lockdown, what that role must not do.
CONFINE_TRY =	$(B)/regress/confine_try
$(CONFINE_TRY): regress/confine/confine_try.c $(LIBDEPOT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The extract child, run for real, asked through fe_extract.c.
EXTRACT_TRY =	$(B)/regress/extract_try
$(EXTRACT_TRY): regress/extract/extract_try.c $(LIBDEPOTD) $(LIBDEPOT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Icmd/depotd -Iregress/unit $(LDFLAGS) -o $@ $^ \
	    $(LDLIBS)

units: $(UNIT_BINS) $(CONFINE_TRY) $(EXTRACT_TRY)

run: deps-run
	@$(MAKE) all
	@sh regress/harness/run-local.sh

check: deps
	@$(MAKE) all units
	@sh regress/run.sh

lint:
	@$(MAKE) WERROR=-Werror all units
	mandoc -Tlint -Werror $(MANS)

fuzz: deps
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-600} sh regress/fuzz/run.sh

bench: deps
	@$(MAKE) all
	@sh regress/bench/run.sh

install: all
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(EXAMPLEDIR) \
	    $(DESTDIR)$(LIBEXECDIR)
	install -m 755 $(PROGS) $(DESTDIR)$(SBINDIR)
	install -m 644 cmd/depot-sandboxd/runner.py $(DESTDIR)$(LIBEXECDIR)
	for m in $(MANS); do \
		s=$${m##*.}; install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s; \
	done
	install -m 644 etc/depotd.conf $(DESTDIR)$(EXAMPLEDIR)/depotd.conf
	install -m 644 etc/depotd.service etc/depotd.sysvinit \
	    etc/rc.d/depotd $(DESTDIR)$(EXAMPLEDIR)/

package: all
	@sh etc/package/build-deb.sh

clean:
	rm -rf $(B)

-include $(shell find $(B) -name '*.d' -type f 2>/dev/null)
