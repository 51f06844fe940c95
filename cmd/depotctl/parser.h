/*
 * parser.h: depotctl's command line grammar.
 */
#ifndef DEPOTCTL_PARSER_H
#define DEPOTCTL_PARSER_H

#include "proto.h"

/* Fills cmd from argv; returns -1 with a message on stderr. */
int	 parse_command(int argc, char *argv[], struct ctl_cmd *cmd);
void	 parser_usage(void);

#endif
