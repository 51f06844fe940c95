build2/lib/util.o: lib/util.c lib/log.h lib/cdefs.h lib/util.h
lib/log.h:
lib/cdefs.h:
lib/util.h:
