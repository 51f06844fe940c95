build2/lib/http_query.o: lib/http_query.c lib/http.h
lib/http.h:
