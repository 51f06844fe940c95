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
 * extract.h: the extract child's parts (extract.c, extract_jail.c).
 */
#ifndef DEPOTD_EXTRACT_H
#define DEPOTD_EXTRACT_H

#include <sys/types.h>

#define EXTRACT_BWRAP		"/usr/bin/bwrap"
#define EXTRACT_PDFTOTEXT	"/usr/bin/pdftotext"

/* Limits of one jailed pdftotext. */
#define EXTRACT_AS_MAX		(512LL * 1024 * 1024)	/* address space */
#define EXTRACT_NOFILE_MAX	64

/* Before the lockdown: the seccomp filter of every jail. */
void	 extract_jail_prepare(void);
/* That filter, as BPF instructions (for the tests). */
const unsigned char *extract_jail_bpf(size_t *len);
/*
 * Starts pdftotext in a bubblewrap jail reading pdf_fd and writing
 * out_fd, in a process group of its own whose id is the returned pid;
 * -1 on failure.  The caller keeps both descriptors.
 */
pid_t	 extract_jail_start(int pdf_fd, int out_fd, int pages, int timeout);
/* 0 when both programs are there to run; -1 names the missing one. */
int	 extract_jail_check(const char **missing);

#endif
