/* fuzz-sources: build/cmd/depotd/parse.c cmd/depotd/conf.c cmd/depotd/store_url.c lib/util.c lib/log.c */
/*
 * fuzz_config.c: parse_config on arbitrary files.  The input is written
 * to a private mode-600 file (the parser reads files, not buffers); a
 * configuration that parses must also print, and survive the JSON trip
 * to a child unchanged.  Needs build/cmd/depotd/parse.c (make builds it
 * from parse.y).
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static char	 conf_path[] = "/tmp/fuzz_config.XXXXXX";
static int	 conf_fd = -1;

static int
write_input(const uint8_t *data, size_t size)
{
	if (conf_fd == -1) {
		if ((conf_fd = mkstemp(conf_path)) == -1)
			return -1;
	}
	if (ftruncate(conf_fd, 0) == -1 ||
	    pwrite(conf_fd, data, size, 0) != (ssize_t)size)
		return -1;
	return 0;
}

static void
check_round_trip(const struct depotd_conf *conf)
{
	struct depotd_conf	*back;
	char			*json, *again, *text = NULL;
	size_t			 len = 0;
	FILE			*fp;

	if ((fp = open_memstream(&text, &len)) != NULL) {
		conf_print(fp, conf);
		fclose(fp);
		free(text);
	}
	if ((json = conf_to_json(conf, CONF_SECRETS_ALL)) == NULL)
		return;
	if ((back = conf_from_json(json)) == NULL)
		abort();	/* we wrote it: we must read it */
	again = conf_to_json(back, CONF_SECRETS_ALL);
	if (again == NULL || strcmp(json, again) != 0)
		abort();
	free(again);
	free(json);
	conf_free(back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct depotd_conf	*conf;

	if (write_input(data, size) == -1)
		return 0;
	if ((conf = parse_config(conf_path, 0)) != NULL) {
		check_round_trip(conf);
		conf_free(conf);
	}
	return 0;
}
