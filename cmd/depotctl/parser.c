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
 * parser.c: depotctl's commands, one table row each.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "parser.h"

struct command {
	const char	*words[2];
	int		 type;
	const char	*usage;
};

static const struct command commands[] = {
	{ { "show", "status" }, CTL_STATUS, "show status" },
	{ { "show", "models" }, CTL_SHOW_MODELS, "show models" },
	{ { "reload", NULL }, CTL_RELOAD, "reload" },
	{ { "log", "verbose" }, CTL_LOG_VERBOSE, "log verbose" },
	{ { "log", "brief" }, CTL_LOG_BRIEF, "log brief" },
	{ { "sweep", NULL }, CTL_SWEEP, "sweep" },
	{ { "user", "add" }, CTL_USER_ADD, "user add name" },
	{ { "user", "list" }, CTL_USER_LIST, "user list" },
	{ { "workspace", "add" }, CTL_WORKSPACE_ADD, "workspace add name" },
	{ { "workspace", "list" }, CTL_WORKSPACE_LIST, "workspace list" },
	{ { "key", "create" }, CTL_KEY_CREATE,
	    "key create -u user -w workspace [-e lifetime]" },
	{ { "key", "list" }, CTL_KEY_LIST, "key list" },
	{ { "key", "revoke" }, CTL_KEY_REVOKE, "key revoke key-id|prefix" },
	{ { "container", "list" }, CTL_CONTAINER_LIST,
	    "container list [-u user] [-w workspace]" },
	{ { "container", "show" }, CTL_CONTAINER_SHOW, "container show id" },
	{ { "container", "destroy" }, CTL_CONTAINER_DESTROY,
	    "container destroy id" },
	{ { "limits", "set" }, CTL_LIMITS_SET, "limits set key-id|prefix "
	    "[-r rpm] [-t tpm] [-c concurrency] [-d tokens/day] "
	    "[-m tokens/month]" },
	{ { "limits", "show" }, CTL_LIMITS_SHOW, "limits show key-id|prefix" },
	{ { "usage", NULL }, CTL_USAGE, "usage [-b user|workspace|model|day]" },
};

void
parser_usage(void)
{
	size_t	 i;

	fprintf(stderr, "usage: depotctl [-s socket] command [argument ...]\n"
	    "commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(stderr, "\t%s\n", commands[i].usage);
}

static int
arg_copy(struct ctl_cmd *cmd, int i, const char *v)
{
	if (strlcpy(cmd->args[i], v, CTL_ARGLEN) >= CTL_ARGLEN) {
		fprintf(stderr, "depotctl: argument too long: %s\n", v);
		return -1;
	}
	return 0;
}

/*
 * Options into the command's arguments: the option letter at position
 * i of slots ("uwe": -u into arg 0, -w into arg 1, -e into arg 2).
 * Returns -1 for an unknown option, a stray word or one too long.
 */
static int
slot_args(int argc, char *argv[], struct ctl_cmd *cmd, const char *slots)
{
	char	 optstring[2 * CTL_ARGS + 1], *slot;
	size_t	 i;
	int	 ch;

	for (i = 0; slots[i] != '\0' && i < CTL_ARGS; i++) {
		optstring[2 * i] = slots[i];
		optstring[2 * i + 1] = ':';
	}
	optstring[2 * i] = '\0';
	optind = 0;
	while ((ch = getopt(argc, argv, optstring)) != -1) {
		if (ch == '?' || ch == ':' ||
		    (slot = strchr(slots, ch)) == NULL ||
		    arg_copy(cmd, slot - slots, optarg) == -1)
			return -1;
	}
	return optind == argc ? 0 : -1;
}

static int
key_create_args(int argc, char *argv[], struct ctl_cmd *cmd)
{
	if (slot_args(argc, argv, cmd, "uwe") == -1 ||
	    cmd->args[0][0] == '\0' || cmd->args[1][0] == '\0') {
		fprintf(stderr, "usage: depotctl key create -u user "
		    "-w workspace [-e lifetime]\n");
		return -1;
	}
	return 0;
}

static int
container_list_args(int argc, char *argv[], struct ctl_cmd *cmd)
{
	if (slot_args(argc, argv, cmd, "uw") == -1) {
		fprintf(stderr, "usage: depotctl container list [-u user] "
		    "[-w workspace]\n");
		return -1;
	}
	return 0;
}

static int
limit_number(const char *s)
{
	size_t	 n = strspn(s, "0123456789");

	return n > 0 && n <= 13 && s[n] == '\0' &&
	    (n < 13 || strcmp(s, "1000000000000") == 0);
}

/* Each limit a number of 0 (none) or more; one left out is the default. */
static int
limits_set_args(int argc, char *argv[], struct ctl_cmd *cmd)
{
	static const char	 letters[] = "rtcdm";
	char			 field[5][24], *slot;
	int			 ch, i;

	memset(field, 0, sizeof(field));
	optind = 0;
	while ((ch = getopt(argc, argv, "r:t:c:d:m:")) != -1) {
		if ((slot = strchr(letters, ch)) == NULL)
			goto usage;
		if (!limit_number(optarg)) {
			fprintf(stderr, "depotctl: -%c %s: not a number from 0 "
			    "to 10^12\n", ch, optarg);
			return -1;
		}
		strlcpy(field[slot - letters], optarg, sizeof(field[0]));
	}
	if (optind != argc - 1)
		goto usage;
	if (arg_copy(cmd, 0, argv[optind]) == -1)
		return -1;
	for (i = 0; i < 5; i++) {
		if (i > 0)
			strlcat(cmd->args[1], ",", CTL_ARGLEN);
		strlcat(cmd->args[1], field[i], CTL_ARGLEN);
	}
	return 0;
usage:
	fprintf(stderr, "usage: depotctl limits set key-id|prefix [-r rpm] "
	    "[-t tpm] [-c concurrency] [-d tokens/day] [-m tokens/month]\n");
	return -1;
}

static int
usage_args(int argc, char *argv[], struct ctl_cmd *cmd)
{
	if (slot_args(argc, argv, cmd, "b") == -1) {
		fprintf(stderr, "usage: depotctl usage "
		    "[-b user|workspace|model|day]\n");
		return -1;
	}
	if (cmd->args[0][0] == '\0')
		strlcpy(cmd->args[0], "user", CTL_ARGLEN);
	return 0;
}

static int
words_match(const struct command *c, int argc, char *argv[])
{
	if (argc < 1 || strcmp(argv[0], c->words[0]) != 0)
		return 0;
	if (c->words[1] == NULL)
		return 1;
	return argc >= 2 && strcmp(argv[1], c->words[1]) == 0;
}

int
parse_command(int argc, char *argv[], struct ctl_cmd *cmd)
{
	const struct command	*c = NULL;
	size_t			 i;
	int			 used;

	memset(cmd, 0, sizeof(*cmd));
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (words_match(&commands[i], argc, argv)) {
			c = &commands[i];
			break;
		}
	if (c == NULL) {
		parser_usage();
		return -1;
	}
	cmd->type = c->type;
	used = c->words[1] ? 2 : 1;
	argc -= used;
	argv += used;
	switch (c->type) {
	case CTL_KEY_CREATE:
		return key_create_args(argc + 1, argv - 1, cmd);
	case CTL_CONTAINER_LIST:
		return container_list_args(argc + 1, argv - 1, cmd);
	case CTL_LIMITS_SET:
		return limits_set_args(argc + 1, argv - 1, cmd);
	case CTL_USAGE:
		return usage_args(argc + 1, argv - 1, cmd);
	case CTL_CONTAINER_SHOW:
	case CTL_CONTAINER_DESTROY:
	case CTL_LIMITS_SHOW:
	case CTL_USER_ADD:
	case CTL_WORKSPACE_ADD:
	case CTL_KEY_REVOKE:
		if (argc != 1) {
			fprintf(stderr, "usage: depotctl %s\n", c->usage);
			return -1;
		}
		return arg_copy(cmd, 0, argv[0]);
	default:
		if (argc != 0) {
			fprintf(stderr, "usage: depotctl %s\n", c->usage);
			return -1;
		}
		return 0;
	}
}
