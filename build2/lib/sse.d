build2/lib/sse.o: lib/sse.c lib/sse.h
lib/sse.h:
