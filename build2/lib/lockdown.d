build2/lib/lockdown.o: lib/lockdown.c lib/log.h lib/cdefs.h \
 lib/lockdown.h lib/privdrop.h
lib/log.h:
lib/cdefs.h:
lib/lockdown.h:
lib/privdrop.h:
