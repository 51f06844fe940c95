build2/lib/lockdown_landlock.o: lib/lockdown_landlock.c lib/log.h \
 lib/cdefs.h lib/lockdown.h lib/privdrop.h
lib/log.h:
lib/cdefs.h:
lib/lockdown.h:
lib/privdrop.h:
