build2/lib/jsontext.o: lib/jsontext.c lib/jsontext.h
lib/jsontext.h:
