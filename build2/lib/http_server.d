build2/lib/http_server.o: lib/http_server.c lib/http_private.h lib/http.h \
 lib/log.h lib/cdefs.h
lib/http_private.h:
lib/http.h:
lib/log.h:
lib/cdefs.h:
