/* fuzz-sources: lib/imsg.c lib/log.c lib/util.c lib/http_limits.c cmd/depotd/proto.c cmd/depotd/conf_msg.c cmd/depotd/conf.c cmd/depotd/conf_url.c cmd/depotd/conf_ca.c */
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
 * fuzz_imsg.c: the imsg stream decoder and the channel check on
 * arbitrary bytes.  The first byte picks the channel (which receiver,
 * which sender, as proto.c lists them); the rest arrives on a
 * socketpair in chunks whose sizes the input also chooses.  Whatever
 * the check lets through must fit its rule, and a configuration part it
 * lets through must be one conf_recv() can apply.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"
#include "proto.h"
#include "config.h"

static const enum proc_role pairs[][2] = {
	{ ROLE_FRONTEND, ROLE_MASTER }, { ROLE_STORAGE, ROLE_MASTER },
	{ ROLE_BROKER, ROLE_MASTER }, { ROLE_MASTER, ROLE_FRONTEND },
	{ ROLE_MASTER, ROLE_STORAGE }, { ROLE_STORAGE, ROLE_FRONTEND },
	{ ROLE_STORAGE, ROLE_BROKER }, { ROLE_FRONTEND, ROLE_STORAGE },
	{ ROLE_BROKER, ROLE_STORAGE }, { ROLE_BROKER, ROLE_FRONTEND },
	{ ROLE_EXTRACT, ROLE_MASTER }, { ROLE_MASTER, ROLE_EXTRACT },
	{ ROLE_EXTRACT, ROLE_FRONTEND }, { ROLE_FRONTEND, ROLE_EXTRACT },
};
#define NPAIRS	(sizeof(pairs) / sizeof(pairs[0]))

static int
is_conf_part(uint32_t type)
{
	return type >= IMSG_CONF_SECRET && type <= IMSG_CONF_SANDBOX;
}

/* Every message the channel allows is handled as its receiver would. */
static void
take(const struct imsg_channel *chan, struct imsg *imsg,
    struct depotd_conf *conf)
{
	char	 why[128];
	size_t	 i;

	if (imsg_check(chan, imsg, why, sizeof(why)) == -1)
		return;
	for (i = 0; i < chan->nrules; i++)
		if (chan->rules[i].type == imsg->hdr.type)
			break;
	if (i == chan->nrules || imsg->datalen < chan->rules[i].min ||
	    imsg->datalen > chan->rules[i].max)
		abort();	/* allowed, yet outside its rule */
	if (is_conf_part(imsg->hdr.type) && conf_recv(conf, imsg) == -1 &&
	    imsg->hdr.type != IMSG_CONF_SECRET)
		abort();	/* only a secret slot may be unknown */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct imsg_channel	*chan;
	struct depotd_conf		*conf;
	struct imsgbuf			 ibuf;
	struct imsg			 imsg;
	size_t				 off, chunk;
	int				 sv[2], rc = 0;

	if (size < 2)
		return 0;
	chan = proto_channel(pairs[data[0] % NPAIRS][0],
	    pairs[data[0] % NPAIRS][1]);
	chunk = 1 + data[1] * 64;
	data += 2;
	size -= 2;
	if (chan == NULL || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		abort();
	if ((conf = conf_new()) == NULL || imsgbuf_init(&ibuf, sv[1]) == -1)
		abort();
	for (off = 0; off < size && rc != -1; off += chunk) {
		if (chunk > size - off)
			chunk = size - off;
		if (write(sv[0], data + off, chunk) != (ssize_t)chunk)
			abort();
		if (imsgbuf_read(&ibuf) <= 0)
			break;
		while ((rc = imsg_get(&ibuf, &imsg)) == 1) {
			take(chan, &imsg, conf);
			imsg_free(&imsg);
		}
	}
	imsgbuf_clear(&ibuf);
	conf_free(conf);
	close(sv[0]);
	close(sv[1]);
	return 0;
}
