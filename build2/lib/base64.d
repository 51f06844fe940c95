build2/lib/base64.o: lib/base64.c lib/base64.h
lib/base64.h:
