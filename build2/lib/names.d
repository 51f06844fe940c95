build2/lib/names.o: lib/names.c lib/names.h
lib/names.h:
