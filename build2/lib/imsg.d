build2/lib/imsg.o: lib/imsg.c lib/log.h lib/cdefs.h lib/imsg.h
lib/log.h:
lib/cdefs.h:
lib/imsg.h:
