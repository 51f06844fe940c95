build2/lib/calltab.o: lib/calltab.c lib/calltab.h
lib/calltab.h:
