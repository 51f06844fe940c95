build2/lib/lockdown_policy.o: lib/lockdown_policy.c lib/lockdown.h \
 lib/privdrop.h
lib/lockdown.h:
lib/privdrop.h:
