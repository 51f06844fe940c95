build2/lib/multipart.o: lib/multipart.c lib/multipart.h lib/names.h
lib/multipart.h:
lib/names.h:
