build2/lib/mediatype.o: lib/mediatype.c lib/mediatype.h
lib/mediatype.h:
