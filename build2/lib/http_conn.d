build2/lib/http_conn.o: lib/http_conn.c lib/http_private.h lib/http.h \
 lib/log.h lib/cdefs.h
lib/http_private.h:
lib/http.h:
lib/log.h:
lib/cdefs.h:
