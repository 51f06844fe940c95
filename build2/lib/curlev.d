build2/lib/curlev.o: lib/curlev.c lib/curlev.h lib/log.h lib/cdefs.h
lib/curlev.h:
lib/log.h:
lib/cdefs.h:
