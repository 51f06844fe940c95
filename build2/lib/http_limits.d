build2/lib/http_limits.o: lib/http_limits.c lib/http.h
lib/http.h:
