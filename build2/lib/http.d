build2/lib/http.o: lib/http.c lib/http_private.h lib/http.h lib/log.h \
 lib/cdefs.h
lib/http_private.h:
lib/http.h:
lib/log.h:
lib/cdefs.h:
