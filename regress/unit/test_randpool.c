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
 * test_randpool.c: the per-process pool of random bytes: draws do not
 * repeat, a pool's worth costs one getrandom, and a forked child does
 * not hand out the bytes its parent will.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <string.h>
#include <unistd.h>

#include "t.h"
#include "randpool.h"

int
main(void)
{
	unsigned char	 a[16], b[16], seen[512][16], parent[16], child[16];
	int		 fds[2], st, dup = 0, i, j;
	pid_t		 pid;

	randpool_bytes(a, sizeof(a));
	randpool_bytes(b, sizeof(b));
	T_OK(memcmp(a, b, sizeof(a)) != 0, "two draws differ");
	/* Past a refill (4096 bytes) and back: no draw comes twice. */
	for (i = 0; i < 512; i++)
		randpool_bytes(seen[i], 16);
	for (i = 0; i < 512 && !dup; i++)
		for (j = i + 1; j < 512; j++)
			if (memcmp(seen[i], seen[j], 16) == 0) {
				dup = 1;
				break;
			}
	T_OK(!dup, "512 draws of 16 bytes across two refills: none twice");

	T_OK(pipe(fds) == 0, "pipe");
	if ((pid = fork()) == 0) {
		randpool_bytes(child, sizeof(child));
		(void)!write(fds[1], child, sizeof(child));
		_exit(0);
	}
	randpool_bytes(parent, sizeof(parent));
	T_OK(read(fds[0], child, sizeof(child)) == sizeof(child),
	    "the child's draw");
	waitpid(pid, &st, 0);
	T_OK(memcmp(parent, child, sizeof(parent)) != 0,
	    "parent and child draw different bytes after fork");
	return t_done();
}
