/* fuzz-sources: build/cmd/depotd/parse.c cmd/depotd/conf.c cmd/depotd/conf_url.c cmd/depotd/conf_print.c cmd/depotd/store/store_url.c lib/util.c lib/log.c lib/http_limits.c */
/*
 * Copyright (c) 2026 The depotd authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/*
 * fuzz_config.c: parse_config on arbitrary files.  The input is written
 * to a private mode-600 file (the parser reads files, not buffers); a
 * configuration that parses must also print, the same twice.  The
 * typed messages that carry it to the children are fuzzed by
 * fuzz_imsg.c.  Needs build/cmd/depotd/parse.c (make builds it from
 * parse.y).
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

/* What parses must print, and print the same twice. */
static void
check_print(const struct depotd_conf *conf)
{
	char	*text[2] = { NULL, NULL };
	size_t	 len[2] = { 0, 0 };
	FILE	*fp;
	int	 i;

	for (i = 0; i < 2; i++) {
		if ((fp = open_memstream(&text[i], &len[i])) == NULL)
			return;
		conf_print(fp, conf);
		fclose(fp);
	}
	if (len[0] != len[1] || memcmp(text[0], text[1], len[0]) != 0)
		abort();
	free(text[0]);
	free(text[1]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct depotd_conf	*conf;

	if (write_input(data, size) == -1)
		return 0;
	if ((conf = parse_config(conf_path, 0)) != NULL) {
		check_print(conf);
		conf_free(conf);
	}
	return 0;
}
