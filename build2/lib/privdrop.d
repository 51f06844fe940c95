build2/lib/privdrop.o: lib/privdrop.c lib/log.h lib/cdefs.h \
 lib/privdrop.h
lib/log.h:
lib/cdefs.h:
lib/privdrop.h:
