build2/lib/lockdown_seccomp.o: lib/lockdown_seccomp.c lib/log.h \
 lib/cdefs.h lib/lockdown.h lib/privdrop.h
lib/log.h:
lib/cdefs.h:
lib/lockdown.h:
lib/privdrop.h:
