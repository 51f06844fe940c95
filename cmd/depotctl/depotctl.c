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
 * depotctl.c: talk to depotd over its control socket.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "imsg.h"
#include "util.h"
#include "parser.h"

static int
control_connect(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd;

	if (unix_addr(&sun, path) == -1)
		errx(1, "socket path too long: %s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		err(1, "socket");
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		err(1, "connect %s", path);
	return fd;
}

/* Prints reply lines until the end marker; returns its status. */
static int
read_replies(struct imsgbuf *ibuf)
{
	struct imsg	 imsg;
	char		 why[128];
	int32_t		 status;
	ssize_t		 n;
	int		 r;

	for (;;) {
		while ((r = imsg_get(ibuf, &imsg)) == 1) {
			if (imsg_check(&proto_ctl_reply, &imsg, why,
			    sizeof(why)) == -1)
				errx(1, "malformed reply: %s", why);
			switch (imsg.hdr.type) {
			case IMSG_CTL_LINE:
				if (((char *)imsg.data)[imsg.datalen - 1] !=
				    '\0')
					errx(1, "malformed reply");
				printf("%s\n", (char *)imsg.data);
				break;
			case IMSG_CTL_END:
				memcpy(&status, imsg.data, sizeof(status));
				imsg_free(&imsg);
				return status;
			}
			imsg_free(&imsg);
		}
		if (r == -1)
			errx(1, "malformed reply");
		if ((n = imsgbuf_read(ibuf)) == 0)
			errx(1, "depotd closed the connection");
		if (n == -1)
			err(1, "read");
	}
}

int
main(int argc, char *argv[])
{
	const char	*sock = DEPOTD_SOCKET;
	struct imsgbuf	 ibuf;
	struct ctl_cmd	 cmd;
	int		 ch, fd, status;

	while ((ch = getopt(argc, argv, "+s:")) != -1) {
		switch (ch) {
		case 's':
			sock = optarg;
			break;
		default:
			parser_usage();
			return 1;
		}
	}
	argc -= optind;
	argv += optind;
	if (parse_command(argc, argv, &cmd) == -1)
		return 1;
	fd = control_connect(sock);
	if (imsgbuf_init(&ibuf, fd) == -1)
		err(1, "imsgbuf_init");
	if (imsg_compose(&ibuf, IMSG_CTL_CMD, 0, getpid(), -1, &cmd,
	    sizeof(cmd)) == -1 || imsgbuf_flush(&ibuf) == -1)
		err(1, "send");
	status = read_replies(&ibuf);
	imsgbuf_clear(&ibuf);
	close(fd);
	return status;
}
