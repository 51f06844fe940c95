build2/lib/http_reply.o: lib/http_reply.c lib/http_private.h lib/http.h \
 lib/log.h lib/cdefs.h
lib/http_private.h:
lib/http.h:
lib/log.h:
lib/cdefs.h:
