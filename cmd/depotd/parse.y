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
 * parse.y: the depotd.conf(5) grammar and its lexer.
 *
 * Statements end at a newline; blocks in braces may span lines.  The
 * lexer expands $macros by pushing their text back into the input, so a
 * macro's value is read again as unquoted words.  Errors are printed as
 * "file:line: message" and counted; parsing goes on to the end so that
 * one run reports every mistake.
 */

%{
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <netdb.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "store/store_url.h"
#include "util.h"

#define CONF_MAX_STRING		8192
#define CONF_MAX_DEPTH		16	/* nested includes */
#define CONF_PUSHBACK		(3 * CONF_MAX_STRING)
#define CONF_MAX_EXPANSIONS	64	/* macros expanding macros */
#define BAD_VALUE		INT64_MIN /* already reported */

/* Where text came from, for the rule on secrets in readable files. */
struct origin {
	TAILQ_ENTRY(origin)	 entry;
	char			*name;
	mode_t			 mode;
	int			 reported;
};

struct file {
	TAILQ_ENTRY(file)	 entry;
	FILE			*stream;
	char			*name;
	int			 lineno;
	int			 eol;		/* newline token seen */
	int			 eof;		/* final newline given */
	int			 expansions;
	struct origin		*origin;
	size_t			 npushback;
	size_t			 pushcap;	/* grows to CONF_PUSHBACK */
	unsigned char		*pushback;
	struct origin		**pushsrc;
};

struct sym {
	TAILQ_ENTRY(sym)	 entry;
	char			*name;
	char			*value;
	int			 persist;	/* from -D: wins over the file */
	struct origin		*origin;
};

typedef struct {
	union {
		int64_t		 number;
		char		*string;
	} v;
	struct origin		*origin;
} YYSTYPE;
#define YYSTYPE_IS_DECLARED	1

enum storage_scheme {
	SCHEME_NONE,
	SCHEME_FILE,
	SCHEME_S3,
	SCHEME_SFTP,
};

static TAILQ_HEAD(file_stack, file) files = TAILQ_HEAD_INITIALIZER(files);
static TAILQ_HEAD(, origin)	 origins = TAILQ_HEAD_INITIALIZER(origins);
static TAILQ_HEAD(, sym)	 symhead = TAILQ_HEAD_INITIALIZER(symhead);
static struct file		*file;
static struct depotd_conf	*conf;
static int			 errors;
static int			 lex_reported;	/* suppress "syntax error" */
static enum storage_scheme	 scheme;
static int			 storage_seen;
static struct upstream_conf	*upstream;
static struct model_conf	*model;
static int			 version_seen;	/* anthropic-version */
static char			**arena;
static size_t			 narena, arena_cap;

int		 yylex(void);
int		 yyparse(void);
void		 yyerror(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
static struct file *pushfile(const char *, int);
static int	 popfile(void);
static int	 symset(const char *, const char *, int);
static struct sym *symfind(const char *);
static void	 symclear(void);
static void	 secret_origin_check(struct origin *);
static int	 in_range(int64_t, int64_t, int64_t, const char *);

#define LIMIT_MAX	1000000000000LL	/* requests or tokens */
static void	 include_file(const char *);
static void	 listen_add(const char *, int64_t);
static void	 storage_begin(const char *);
static void	 storage_end(void);
static int	 storage_option(const char *, enum storage_scheme);
static void	 upstream_begin(const char *);
static void	 upstream_end(void);
static void	 upstream_url(const char *, int64_t);
static void	 model_begin(const char *, const char *);
static void	 model_end(void);
static void	 sandbox_url(const char *);
static void	 sandbox_ca_file(const char *);
static void	 copy_string(char *, size_t, const char *, const char *);
static void	 set_secret(char **, const char *);
static char	*arena_keep(char *);
static void	 arena_clear(void);
static void	 final_checks(const char *);
%}

%token	ACCESSKEY ADMINKEY ANTHROPIC ANTHROPICVERSION API APIKEY CAFILE
%token	CHROOT CONNECTTIMEOUT CONTROL DATABASE DIRECTORY EXECTIMEOUT
%token	EXTRACTPAGES EXTRACTSIZE MAXOUTPUTFILES MAXOUTPUTSIZE
%token	MAXJSONVALUES MAXJSONMEMORY
%token	MAXREQUESTSIZE MAXSESSIONS MAXTOKENS PDFASTEXT RESPONSES
%token	FRONTENDTIMEOUT
%token	FAILOVER WEIGHT
%token	ENDPOINT FILES HEADERTIMEOUT HTTP IDENTITY IDLETIMEOUT INCLUDE
%token	KEEPALIVE KNOWNHOSTS LISTEN LOCAL MAXCONNECTIONS MAXFILENAME
%token	MAXHEADERS MAXHEADERSIZE MAXSIZE MAXTOOLITERATIONS MAXTRANSFERS
%token	MAXUPLOADS MODEL NATIVECODE NO ON OPENAI PARTSIZE PASSPHRASE
%token	BODYTIMEOUT MAXCONNSPERADDR MINBODYRATE
%token	PATHSTYLE POOL PORT PREFORK REGION REMOTENAME RETENTION SANDBOX
%token	SECRETKEY SESSIONTOKEN SOCKET STORAGE SWEEPINTERVAL TEXTONLY TIMEOUT
%token	TOKEN UPSTREAM URL USER WRITINGGRACE
%token	MAXSESSIONSPERKEY TRANSFERTIMEOUT
%token	MAXANSWERSIZE MAXTOOLCALLS REQUESTTIMEOUT
%token	DISCOVER
%token	LIMITS REQUESTSPERMINUTE TOKENSPERMINUTE CONCURRENCY
%token	TOKENSPERDAY TOKENSPERMONTH
%token	CONTAINERS EXPIRESAFTER MAXLIFETIME MAXPERKEY MAXPERWORKSPACE
%token	ERROR
%token	<v.string>	STRING
%token	<v.number>	NUMBER
%type	<v.number>	size duration port pool weight
%type	<v.string>	string secret

%%

grammar		: /* empty */
		| grammar '\n'
		| grammar include '\n'
		| grammar varset '\n'
		| grammar main '\n'
		| grammar error '\n'		{ yyerrok; }
		;

include		: INCLUDE STRING		{
			include_file($2);
		}
		;

string		: STRING
		| NUMBER			{
			char	*text;

			if (asprintf(&text, "%lld", (long long)$1) == -1)
				text = NULL;
			if (($$ = arena_keep(text)) == NULL)
				YYERROR;
		}
		;

varset		: STRING '=' string		{
			const char *p;

			for (p = $1; *p != '\0'; p++)
				if (!isalnum((unsigned char)*p) && *p != '_')
					break;
			if (*p != '\0' || isdigit((unsigned char)*$1))
				yyerror("invalid macro name \"%s\"", $1);
			else if (symset($1, $3, 0) == -1)
				yyerror("cannot set macro \"%s\"", $1);
		}
		;

secret		: STRING			{
			secret_origin_check($<origin>1);
			$$ = $1;
		}
		;

/* A bad value is reported once here and then ignored (BAD_VALUE). */
size		: NUMBER			{
			$$ = $1;
			if ($1 < 0) {
				yyerror("invalid size %lld", (long long)$1);
				$$ = BAD_VALUE;
			}
		}
		| STRING			{
			if (parse_size($1, &$$) == -1) {
				yyerror("invalid size \"%s\"", $1);
				$$ = BAD_VALUE;
			}
		}
		;

duration	: NUMBER			{
			$$ = $1;
			if ($1 < 0) {
				yyerror("invalid duration %lld", (long long)$1);
				$$ = BAD_VALUE;
			}
		}
		| STRING			{
			if (parse_duration($1, &$$) == -1) {
				yyerror("invalid duration \"%s\"", $1);
				$$ = BAD_VALUE;
			}
		}
		;

port		: /* empty */			{ $$ = 8080; }
		| PORT NUMBER			{
			if (!in_range($2, 1, 65535, "port"))
				YYERROR;
			$$ = $2;
		}
		;

pool		: /* empty */			{ $$ = 4; }
		| POOL NUMBER			{
			if (!in_range($2, 1, 64, "pool"))
				YYERROR;
			$$ = $2;
		}
		;

optnl		: /* empty */
		| optnl '\n'
		;

main		: STRING			{
			yyerror("unknown keyword \"%s\"", $1);
			YYERROR;
		}
		| LISTEN ON STRING port		{
			listen_add($3, $4);
		}
		| LISTEN ON NUMBER port		{
			yyerror("invalid listen address %lld",
			    (long long)$3);
		}
		| PREFORK NUMBER		{
			if (in_range($2, 1, 64, "prefork"))
				conf->prefork = $2;
		}
		| FRONTENDTIMEOUT duration	{
			if (in_range($2, 2, 3600, "frontend-timeout"))
				conf->frontend_timeout = $2;
		}
		| USER STRING			{
			copy_string(conf->user, sizeof(conf->user), $2,
			    "user");
		}
		| CHROOT STRING			{
			if ($2[0] != '/')
				yyerror("chroot must be an absolute path");
			else
				copy_string(conf->chroot,
				    sizeof(conf->chroot), $2, "chroot");
		}
		| CONTROL SOCKET STRING		{
			if ($3[0] != '/')
				yyerror("control socket must be an absolute "
				    "path");
			else
				copy_string(conf->control_socket,
				    sizeof(conf->control_socket), $3,
				    "control socket");
		}
		| DATABASE STRING pool		{
			if (conf->database != NULL)
				yyerror("database already configured");
			if (conf_conninfo_has_password($2))
				secret_origin_check($<origin>2);
			set_secret(&conf->database, $2);
			conf->db_pool = $3;
		}
		| STORAGE USER STRING		{
			copy_string(conf->storage_user,
			    sizeof(conf->storage_user), $3, "storage user");
		}
		| STORAGE STRING		{
			storage_begin($2);
		} storeblock			{
			storage_end();
		}
		| FILES '{' optnl filesopts '}'
		| CONTAINERS '{' optnl cntropts '}'
		| LIMITS '{' optnl limitsopts '}'
		| HTTP '{' optnl httpopts '}'
		| SANDBOX LOCAL			{
			conf->sandbox = SANDBOX_LOCAL;
		} localblock
		| NO SANDBOX			{
			conf->sandbox = SANDBOX_NONE;
		}
		| SANDBOX STRING		{
			sandbox_url($2);
		} sandboxblock
		| MAXTOOLITERATIONS NUMBER	{
			if (in_range($2, 1, 100, "max-tool-iterations"))
				conf->max_tool_iterations = $2;
		}
		| MAXANSWERSIZE size		{
			if (in_range($2, 1024, 1024LL * 1024 * 1024,
			    "max-answer-size"))
				conf->max_answer_size = $2;
		}
		| MAXTOOLCALLS NUMBER		{
			if (in_range($2, 1, 128, "max-tool-calls"))
				conf->max_tool_calls = $2;
		}
		| REQUESTTIMEOUT duration	{
			if (in_range($2, 1, 86400, "request-timeout"))
				conf->request_timeout = $2;
		}
		| ADMINKEY secret		{
			if (strlen($2) < 16)
				yyerror("admin-key too short (at least 16 "
				    "characters)");
			set_secret(&conf->admin_key, $2);
		}
		| UPSTREAM STRING		{
			upstream_begin($2);
		} '{' optnl upstreamopts '}'	{
			upstream_end();
		}
		| MODEL STRING UPSTREAM STRING	{
			model_begin($2, $4);
		} modelblock			{
			model_end();
		}
		;

weight		: /* empty */			{ $$ = 1; }
		| WEIGHT NUMBER			{
			$$ = 1;
			if (in_range($2, 1, CONF_WEIGHT_MAX, "weight"))
				$$ = $2;
		}
		;

storeblock	: /* empty */
		| '{' optnl storeopts '}'
		;

storeopts	: /* empty */
		| storeopts storeopt optnl
		;

storeopt	: STRING			{
			yyerror("unknown storage option \"%s\"", $1);
			YYERROR;
		}
		| ENDPOINT STRING		{
			if (storage_option("endpoint", SCHEME_S3)) {
				if (strncmp($2, "http://", 7) != 0 &&
				    strncmp($2, "https://", 8) != 0)
					yyerror("endpoint must be an http:// "
					    "or https:// URL");
				else
					copy_string(conf->storage.endpoint,
					    sizeof(conf->storage.endpoint),
					    $2, "endpoint");
			}
		}
		| REGION STRING			{
			if (storage_option("region", SCHEME_S3))
				copy_string(conf->storage.region,
				    sizeof(conf->storage.region), $2,
				    "region");
		}
		| ACCESSKEY STRING		{
			if (storage_option("access-key", SCHEME_S3))
				set_secret(&conf->storage.access_key, $2);
		}
		| SECRETKEY secret		{
			if (storage_option("secret-key", SCHEME_S3))
				set_secret(&conf->storage.secret_key, $2);
		}
		| SESSIONTOKEN secret		{
			if (storage_option("session-token", SCHEME_S3))
				set_secret(&conf->storage.session_token, $2);
		}
		| PATHSTYLE			{
			if (storage_option("path-style", SCHEME_S3))
				conf->storage.path_style = 1;
		}
		| PARTSIZE size			{
			if (storage_option("part-size", SCHEME_S3) &&
			    $2 != BAD_VALUE) {
				if ($2 < 5 * 1024 * 1024)
					yyerror("part-size must be at least "
					    "5M");
				else if ($2 > 5LL * 1024 * 1024 * 1024)
					yyerror("part-size must be at most "
					    "5G");
				else
					conf->storage.part_size = $2;
			}
		}
		| MAXTRANSFERS NUMBER		{
			if (storage_option("max-transfers", SCHEME_S3) &&
			    in_range($2, 1, 256, "max-transfers"))
				conf->storage.max_transfers = $2;
		}
		| IDENTITY STRING		{
			if (storage_option("identity", SCHEME_SFTP)) {
				if ($2[0] != '/')
					yyerror("identity must be an absolute "
					    "path");
				else
					copy_string(conf->storage.identity,
					    sizeof(conf->storage.identity),
					    $2, "identity");
			}
		}
		| PASSPHRASE secret		{
			if (storage_option("passphrase", SCHEME_SFTP))
				set_secret(&conf->storage.passphrase, $2);
		}
		| KNOWNHOSTS STRING		{
			if (storage_option("known-hosts", SCHEME_SFTP)) {
				if ($2[0] != '/')
					yyerror("known-hosts must be an "
					    "absolute path");
				else
					copy_string(conf->storage.known_hosts,
					    sizeof(conf->storage.known_hosts),
					    $2, "known-hosts");
			}
		}
		| KEEPALIVE duration		{
			if (storage_option("keepalive", SCHEME_SFTP) &&
			    in_range($2, 0, 3600, "keepalive"))
				conf->storage.keepalive = $2;
		}
		;

limitsopts	: /* empty */
		| limitsopts limitsopt optnl
		;

limitsopt	: STRING			{
			yyerror("unknown limits option \"%s\"", $1);
			YYERROR;
		}
		| REQUESTSPERMINUTE NUMBER	{
			if (in_range($2, 1, LIMIT_MAX, "requests-per-minute"))
				conf->limits.requests_per_minute = $2;
		}
		| TOKENSPERMINUTE NUMBER	{
			if (in_range($2, 1, LIMIT_MAX, "tokens-per-minute"))
				conf->limits.tokens_per_minute = $2;
		}
		| CONCURRENCY NUMBER		{
			if (in_range($2, 1, 1000000, "concurrency"))
				conf->limits.concurrency = $2;
		}
		| TOKENSPERDAY NUMBER		{
			if (in_range($2, 1, LIMIT_MAX, "tokens-per-day"))
				conf->limits.tokens_per_day = $2;
		}
		| TOKENSPERMONTH NUMBER		{
			if (in_range($2, 1, LIMIT_MAX, "tokens-per-month"))
				conf->limits.tokens_per_month = $2;
		}
		;

filesopts	: /* empty */
		| filesopts filesopt optnl
		;

filesopt	: STRING			{
			yyerror("unknown files option \"%s\"", $1);
			YYERROR;
		}
		| MAXSIZE size			{
			if (in_range($2, 1, INT64_MAX, "max-size"))
				conf->max_size = $2;
		}
		| RETENTION duration		{
			if ($2 != BAD_VALUE)
				conf->retention = $2;
		}
		| SWEEPINTERVAL duration	{
			if ($2 != BAD_VALUE)
				conf->sweep_interval = $2;
		}
		| MAXFILENAME NUMBER		{
			if (in_range($2, 1, 1024, "max-filename"))
				conf->max_filename = $2;
		}
		| WRITINGGRACE duration		{
			if (in_range($2, 1, 30 * 86400, "writing-grace"))
				conf->writing_grace = $2;
		}
		| MAXUPLOADS NUMBER		{
			if (in_range($2, 1, 1024, "max-uploads-per-key"))
				conf->max_uploads_per_key = $2;
		}
		| EXTRACTPAGES NUMBER		{
			if (in_range($2, 1, 10000, "extract-pages"))
				conf->extract_pages = $2;
		}
		| EXTRACTSIZE size		{
			if (in_range($2, 1024, 1024LL * 1024 * 1024,
			    "extract-size"))
				conf->extract_size = $2;
		}
		;

cntropts	: /* empty */
		| cntropts cntropt optnl
		;

cntropt		: STRING			{
			yyerror("unknown containers option \"%s\"", $1);
			YYERROR;
		}
		| EXPIRESAFTER duration		{
			if (in_range($2, 60, 30 * 86400, "expires-after"))
				conf->cntr_expires_after = $2 / 60;
		}
		| MAXLIFETIME duration		{
			if (in_range($2, 60, 365 * 86400, "max-lifetime"))
				conf->cntr_max_lifetime = $2;
		}
		| MAXPERKEY NUMBER		{
			if (in_range($2, 1, 100000, "max-per-key"))
				conf->cntr_max_per_key = $2;
		}
		| MAXPERWORKSPACE NUMBER	{
			if (in_range($2, 1, 1000000, "max-per-workspace"))
				conf->cntr_max_per_workspace = $2;
		}
		;

httpopts	: /* empty */
		| httpopts httpopt optnl
		;

httpopt		: STRING			{
			yyerror("unknown http option \"%s\"", $1);
			YYERROR;
		}
		| MAXHEADERSIZE size		{
			if (in_range($2, 1024, 1024 * 1024,
			    "max-header-size"))
				conf->http.max_header_bytes = $2;
		}
		| MAXHEADERS NUMBER		{
			if (in_range($2, 1, 1000, "max-headers"))
				conf->http.max_headers = $2;
		}
		| HEADERTIMEOUT duration	{
			if (in_range($2, 1, 3600, "header-timeout"))
				conf->http.header_timeout = $2;
		}
		| IDLETIMEOUT duration		{
			if (in_range($2, 1, 86400, "idle-timeout"))
				conf->http.idle_timeout = $2;
		}
		| BODYTIMEOUT duration		{
			if (in_range($2, 1, 86400, "body-timeout"))
				conf->http.body_timeout = $2;
		}
		| MINBODYRATE size		{
			if (in_range($2, 0, 1024 * 1024 * 1024,
			    "min-body-rate"))
				conf->http.min_body_rate = $2;
		}
		| MAXCONNECTIONS NUMBER		{
			if (in_range($2, 1, 1000000, "max-connections"))
				conf->http.max_conns = $2;
		}
		| MAXCONNSPERADDR NUMBER	{
			if (in_range($2, 1, 1000000,
			    "max-connections-per-address"))
				conf->http.max_conns_per_addr = $2;
		}
		| MAXREQUESTSIZE size		{
			if (in_range($2, 1024, 1024LL * 1024 * 1024 * 1024,
			    "max-request-size"))
				conf->http.max_request_size = $2;
		}
		| MAXJSONVALUES NUMBER		{
			if (in_range($2, 100, 1000000000, "max-json-values"))
				conf->http.max_json_values = $2;
		}
		| MAXJSONMEMORY size		{
			if (in_range($2, 64 * 1024, 1024LL * 1024 * 1024 * 1024,
			    "max-json-memory"))
				conf->http.max_json_memory = $2;
		}
		;

localblock	: /* empty */
		| '{' optnl localopts '}'
		;

localopts	: /* empty */
		| localopts localopt optnl
		;

localopt	: STRING			{
			yyerror("unknown sandbox option \"%s\"", $1);
			YYERROR;
		}
		| sandboxlimit
		| TOKEN STRING			{
			yyerror("sandbox local makes its own token");
		}
		| CAFILE STRING			{
			yyerror("sandbox local takes no ca-file: its socket "
			    "is not TLS");
		}
		| DIRECTORY STRING		{
			if ($2[0] != '/') {
				yyerror("sandbox directory must be an absolute "
				    "path");
				YYERROR;
			}
			copy_string(conf->sandbox_dir, sizeof(conf->sandbox_dir),
			    $2, "sandbox directory");
		}
		;

sandboxblock	: /* empty */
		| '{' optnl sandboxopts '}'
		;

sandboxopts	: /* empty */
		| sandboxopts sandboxopt optnl
		;

sandboxopt	: STRING			{
			yyerror("unknown sandbox option \"%s\"", $1);
			YYERROR;
		}
		| sandboxlimit
		| TOKEN secret			{
			set_secret(&conf->sandbox_token, $2);
		}
		| CAFILE STRING			{
			sandbox_ca_file($2);
		}
		;

/* The limits any sandbox takes, local or by URL. */
sandboxlimit	: EXECTIMEOUT duration		{
			if (in_range($2, 1, 86400, "exec-timeout"))
				conf->exec_timeout = $2;
		}
		| MAXOUTPUTFILES NUMBER		{
			if (in_range($2, 0, 1000, "max-output-files"))
				conf->max_output_files = $2;
		}
		| MAXOUTPUTSIZE size		{
			if (in_range($2, 0, 1024LL * 1024 * 1024 * 1024,
			    "max-output-size"))
				conf->max_output_size = $2;
		}
		| MAXSESSIONS NUMBER		{
			if (in_range($2, 1, 1024, "max-sessions"))
				conf->max_sessions = $2;
		}
		| MAXSESSIONSPERKEY NUMBER	{
			if (in_range($2, 1, 1024, "max-sessions-per-key"))
				conf->max_sessions_per_key = $2;
		}
		| TRANSFERTIMEOUT duration	{
			if (in_range($2, 1, 86400, "transfer-timeout"))
				conf->transfer_timeout = $2;
		}
		;

upstreamopts	: /* empty */
		| upstreamopts upstreamopt optnl
		;

upstreamopt	: STRING			{
			yyerror("unknown upstream option \"%s\"", $1);
			YYERROR;
		}
		| URL STRING weight		{
			upstream_url($2, $3);
		}
		| FAILOVER NUMBER		{
			if (in_range($2, 0, CONF_REPLICAS_MAX - 1,
			    "failover") && upstream != NULL)
				upstream->max_failover = $2;
		}
		| API OPENAI			{
			if (upstream != NULL)
				upstream->api = DIALECT_OPENAI;
		}
		| API ANTHROPIC			{
			if (upstream != NULL)
				upstream->api = DIALECT_ANTHROPIC;
		}
		| API STRING			{
			yyerror("unknown api \"%s\"; use openai or "
			    "anthropic", $2);
		}
		| APIKEY secret			{
			if (upstream != NULL)
				set_secret(&upstream->api_key, $2);
		}
		| TIMEOUT duration		{
			if (in_range($2, 1, 86400, "timeout") &&
			    upstream != NULL)
				upstream->timeout = $2;
		}
		| CONNECTTIMEOUT duration	{
			if (in_range($2, 1, 3600, "connect-timeout") &&
			    upstream != NULL)
				upstream->connect_timeout = $2;
		}
		| IDLETIMEOUT duration		{
			if (in_range($2, 1, 86400, "idle-timeout") &&
			    upstream != NULL)
				upstream->idle_timeout = $2;
		}
		| CAFILE STRING			{
			if ($2[0] != '/')
				yyerror("ca-file must be an absolute path");
			else if (upstream != NULL)
				copy_string(upstream->ca_file,
				    sizeof(upstream->ca_file), $2, "ca-file");
		}
		| ANTHROPICVERSION STRING	{
			version_seen = 1;
			if (upstream != NULL)
				copy_string(upstream->anthropic_version,
				    sizeof(upstream->anthropic_version), $2,
				    "anthropic-version");
		}
		| RESPONSES			{
			if (upstream != NULL)
				upstream->native_responses = 1;
		}
		| DISCOVER			{
			if (upstream != NULL)
				upstream->discover = 1;
		}
		| NO DISCOVER			{
			if (upstream != NULL)
				upstream->discover = 0;
		}
		;

modelblock	: /* empty */
		| '{' optnl modelopts '}'
		;

modelopts	: /* empty */
		| modelopts modelopt optnl
		;

modelopt	: STRING			{
			yyerror("unknown model option \"%s\"", $1);
			YYERROR;
		}
		| TEXTONLY			{
			if (model != NULL)
				model->text_only = 1;
		}
		| NATIVECODE			{
			if (model != NULL)
				model->native_code_execution = 1;
		}
		| REMOTENAME STRING		{
			if (model != NULL)
				copy_string(model->remote_name,
				    sizeof(model->remote_name), $2,
				    "remote-name");
		}
		| PDFASTEXT			{
			if (model != NULL)
				model->pdf_as_text = 1;
		}
		| MAXTOKENS NUMBER		{
			if (in_range($2, 1, 1000000, "max-tokens") &&
			    model != NULL)
				model->max_tokens = $2;
		}
		| MAXTOOLITERATIONS NUMBER	{
			if (in_range($2, 1, 100, "max-tool-iterations") &&
			    model != NULL)
				model->max_tool_iterations = $2;
		}
		;

%%

struct keyword {
	const char	*name;
	int		 token;
};

void
yyerror(const char *fmt, ...)
{
	va_list	 ap;

	errors++;
	/* The lexer already said what was wrong with this token. */
	if (lex_reported && strcmp(fmt, "syntax error") == 0) {
		lex_reported = 0;
		return;
	}
	fprintf(stderr, "%s:%d: ", file->name, file->lineno);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

static int
kw_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct keyword *)elem)->name);
}

/* Sorted by name: lookup is a bsearch. */
static const struct keyword keywords[] = {
	{ "access-key",			ACCESSKEY },
	{ "admin-key",			ADMINKEY },
	{ "anthropic",			ANTHROPIC },
	{ "anthropic-version",		ANTHROPICVERSION },
	{ "api",			API },
	{ "api-key",			APIKEY },
	{ "body-timeout",		BODYTIMEOUT },
	{ "ca-file",			CAFILE },
	{ "chroot",			CHROOT },
	{ "concurrency",		CONCURRENCY },
	{ "connect-timeout",		CONNECTTIMEOUT },
	{ "containers",		CONTAINERS },
	{ "control",			CONTROL },
	{ "database",			DATABASE },
	{ "directory",			DIRECTORY },
	{ "discover",			DISCOVER },
	{ "endpoint",			ENDPOINT },
	{ "exec-timeout",		EXECTIMEOUT },
	{ "expires-after",		EXPIRESAFTER },
	{ "extract-pages",		EXTRACTPAGES },
	{ "extract-size",		EXTRACTSIZE },
	{ "failover",			FAILOVER },
	{ "files",			FILES },
	{ "frontend-timeout",		FRONTENDTIMEOUT },
	{ "header-timeout",		HEADERTIMEOUT },
	{ "http",			HTTP },
	{ "identity",			IDENTITY },
	{ "idle-timeout",		IDLETIMEOUT },
	{ "include",			INCLUDE },
	{ "keepalive",			KEEPALIVE },
	{ "known-hosts",		KNOWNHOSTS },
	{ "limits",			LIMITS },
	{ "listen",			LISTEN },
	{ "local",			LOCAL },
	{ "max-answer-size",		MAXANSWERSIZE },
	{ "max-connections",		MAXCONNECTIONS },
	{ "max-connections-per-address", MAXCONNSPERADDR },
	{ "max-filename",		MAXFILENAME },
	{ "max-header-size",		MAXHEADERSIZE },
	{ "max-headers",		MAXHEADERS },
	{ "max-json-memory",		MAXJSONMEMORY },
	{ "max-json-values",		MAXJSONVALUES },
	{ "max-lifetime",		MAXLIFETIME },
	{ "max-output-files",		MAXOUTPUTFILES },
	{ "max-output-size",		MAXOUTPUTSIZE },
	{ "max-per-key",		MAXPERKEY },
	{ "max-per-workspace",		MAXPERWORKSPACE },
	{ "max-request-size",		MAXREQUESTSIZE },
	{ "max-sessions",		MAXSESSIONS },
	{ "max-sessions-per-key",	MAXSESSIONSPERKEY },
	{ "max-size",			MAXSIZE },
	{ "max-tokens",			MAXTOKENS },
	{ "max-tool-calls",		MAXTOOLCALLS },
	{ "max-tool-iterations",	MAXTOOLITERATIONS },
	{ "max-transfers",		MAXTRANSFERS },
	{ "max-uploads-per-key",	MAXUPLOADS },
	{ "min-body-rate",		MINBODYRATE },
	{ "model",			MODEL },
	{ "native-code-execution",	NATIVECODE },
	{ "no",				NO },
	{ "on",				ON },
	{ "openai",			OPENAI },
	{ "part-size",			PARTSIZE },
	{ "passphrase",			PASSPHRASE },
	{ "path-style",			PATHSTYLE },
	{ "pdf-as-text",		PDFASTEXT },
	{ "pool",			POOL },
	{ "port",			PORT },
	{ "prefork",			PREFORK },
	{ "region",			REGION },
	{ "remote-name",		REMOTENAME },
	{ "request-timeout",		REQUESTTIMEOUT },
	{ "requests-per-minute",	REQUESTSPERMINUTE },
	{ "responses",			RESPONSES },
	{ "retention",			RETENTION },
	{ "sandbox",			SANDBOX },
	{ "secret-key",			SECRETKEY },
	{ "session-token",		SESSIONTOKEN },
	{ "socket",			SOCKET },
	{ "storage",			STORAGE },
	{ "sweep-interval",		SWEEPINTERVAL },
	{ "text-only",			TEXTONLY },
	{ "timeout",			TIMEOUT },
	{ "token",			TOKEN },
	{ "tokens-per-day",		TOKENSPERDAY },
	{ "tokens-per-minute",		TOKENSPERMINUTE },
	{ "tokens-per-month",		TOKENSPERMONTH },
	{ "transfer-timeout",		TRANSFERTIMEOUT },
	{ "upstream",			UPSTREAM },
	{ "url",			URL },
	{ "user",			USER },
	{ "weight",			WEIGHT },
	{ "writing-grace",		WRITINGGRACE },
};

static int
lookup_keyword(const char *word)
{
	const struct keyword	*kw;

	kw = bsearch(word, keywords, sizeof(keywords) / sizeof(keywords[0]),
	    sizeof(keywords[0]), kw_cmp);
	return kw != NULL ? kw->token : STRING;
}

/*
 * The next character of input and where it came from: pushed-back text
 * (macro values, lookahead) first, then the file.  At the end of an
 * included file the parent continues.
 */
static int
lgetc(struct origin **src)
{
	int	 c;

	for (;;) {
		if (file->npushback > 0) {
			file->npushback--;
			*src = file->pushsrc[file->npushback];
			return file->pushback[file->npushback];
		}
		*src = file->origin;
		if (!file->eof) {
			c = getc(file->stream);
			if (c != EOF) {
				/* Errors at the end name the last line. */
				if (file->eol) {
					file->lineno++;
					file->eol = 0;
				}
				file->expansions = 0;
				return c;
			}
			/* A last line without its newline still ends. */
			file->eof = 1;
			return '\n';
		}
		if (popfile() == EOF)
			return EOF;
	}
}

static int
push_grow(void)
{
	unsigned char	 *chars;
	struct origin	**srcs;
	size_t		  cap;

	cap = file->pushcap == 0 ? 64 : file->pushcap * 2;
	if (cap > CONF_PUSHBACK)
		return -1;
	if ((chars = realloc(file->pushback, cap)) == NULL)
		return -1;
	file->pushback = chars;
	if ((srcs = reallocarray(file->pushsrc, cap, sizeof(*srcs))) == NULL)
		return -1;
	file->pushsrc = srcs;
	file->pushcap = cap;
	return 0;
}

static int
lungetc(int c, struct origin *src)
{
	if (c == EOF)
		return 0;
	if (file->npushback == file->pushcap && push_grow() == -1) {
		yyerror("line too long after macro expansion");
		lex_reported = 1;
		return -1;
	}
	file->pushback[file->npushback] = c;
	file->pushsrc[file->npushback] = src;
	file->npushback++;
	return 0;
}

/* Skips to the end of the line after an error the lexer reported. */
static int
skip_line(void)
{
	struct origin	*src;
	int		 c;

	lex_reported = 1;
	do {
		c = lgetc(&src);
	} while (c != '\n' && c != EOF);
	lungetc(c, src);
	return ERROR;
}

static int
is_word_char(int c)
{
	return c != EOF && (isalnum(c) || strchr("-_.:/@+%*~[]^!,", c) != NULL)
	    && c != '\0';
}

static int
expand_macro(void)
{
	struct origin	*src;
	struct sym	*sym;
	char		 name[128];
	size_t		 len = 0, i;
	int		 c;

	while ((c = lgetc(&src)) != EOF && (isalnum(c) || c == '_')) {
		if (len >= sizeof(name) - 1) {
			yyerror("macro name too long");
			return skip_line();
		}
		name[len++] = c;
	}
	lungetc(c, src);
	name[len] = '\0';
	if (len == 0) {
		yyerror("'$' without a macro name");
		return skip_line();
	}
	if ((sym = symfind(name)) == NULL) {
		yyerror("macro \"%s\" not defined", name);
		return skip_line();
	}
	if (++file->expansions > CONF_MAX_EXPANSIONS) {
		yyerror("macro \"%s\" expands into itself", name);
		return skip_line();
	}
	for (i = strlen(sym->value); i > 0; i--)
		if (lungetc((unsigned char)sym->value[i - 1],
		    sym->origin) == -1)
			return skip_line();
	return 0;
}

static int
lex_quoted(void)
{
	struct origin	*src, *first = NULL;
	char		 buf[CONF_MAX_STRING];
	size_t		 len = 0;
	int		 c, next, have_first = 0;
	int		 start_line = file->lineno;

	for (;;) {
		c = lgetc(&src);
		if (!have_first) {
			first = src;
			have_first = 1;
		}
		if (c == EOF || (c == '\n' && file->eof)) {
			explicit_bzero(buf, len);
			file->lineno = start_line;
			yyerror("unterminated quoted string");
			lex_reported = 1;
			return ERROR;
		}
		if (c == '"')
			break;
		if (c == '\n')
			file->lineno++;
		if (c == '\\') {
			next = lgetc(&src);
			if (next == '\n') {
				file->lineno++;
				continue;
			}
			if (next != '"' && next != '\\') {
				/* Not an escape: keep the backslash. */
				lungetc(next, src);
				next = '\\';
			}
			c = next;
		}
		if (c == '\0') {
			explicit_bzero(buf, len);
			yyerror("NUL byte in quoted string");
			return skip_line();
		}
		if (len >= CONF_MAX_STRING - 1) {
			explicit_bzero(buf, len);
			yyerror("string too long");
			return skip_line();
		}
		buf[len++] = c;
	}
	buf[len] = '\0';
	yylval.v.string = arena_keep(strdup(buf));
	explicit_bzero(buf, len);
	if (yylval.v.string == NULL)
		return skip_line();
	yylval.origin = first;
	return STRING;
}

/* A word followed by '=' names a macro, even when it is a keyword. */
static int
followed_by_equals(void)
{
	struct origin	*src[64];
	int		 seen[64], n = 0, c, is_eq;

	do {
		c = lgetc(&src[n]);
		seen[n++] = c;
	} while ((c == ' ' || c == '\t') && n < 64);
	is_eq = c == '=';
	while (n > 0) {
		n--;
		lungetc(seen[n], src[n]);
	}
	return is_eq;
}

static int
lex_word(int c, struct origin *src)
{
	char		 buf[CONF_MAX_STRING];
	const char	*errstr;
	size_t		 len = 0;
	int		 token, numeric = 1;

	yylval.origin = src;
	do {
		if (len >= sizeof(buf) - 1) {
			yyerror("word too long");
			return skip_line();
		}
		if (!isdigit(c) && !(len == 0 && c == '-'))
			numeric = 0;
		buf[len++] = c;
	} while (is_word_char(c = lgetc(&src)));
	lungetc(c, src);
	buf[len] = '\0';

	if (numeric && !(len == 1 && buf[0] == '-')) {
		yylval.v.number = strtonum(buf, LLONG_MIN + 1, LLONG_MAX,
		    &errstr);
		if (errstr != NULL) {
			yyerror("number %s is %s", buf, errstr);
			return skip_line();
		}
		return NUMBER;
	}
	token = followed_by_equals() ? STRING : lookup_keyword(buf);
	if (token == STRING)
		yylval.v.string = arena_keep(strdup(buf));
	explicit_bzero(buf, len);
	if (token == STRING && yylval.v.string == NULL)
		return skip_line();
	return token;
}

int
yylex(void)
{
	struct origin	*src;
	int		 c, next, r;

	for (;;) {
		c = lgetc(&src);
		if (c == ' ' || c == '\t')
			continue;
		if (c == '\\') {
			next = lgetc(&src);
			if (next == '\n') {
				file->lineno++;
				continue;
			}
			lungetc(next, src);
			yyerror("stray backslash");
			return skip_line();
		}
		if (c == '#') {
			while ((c = lgetc(&src)) != '\n' && c != EOF)
				;
		}
		if (c == '$') {
			if ((r = expand_macro()) != 0)
				return r;
			continue;
		}
		break;
	}
	if (c == EOF)
		return 0;
	if (c == '\n') {
		lex_reported = 0;
		if (src == file->origin && file->npushback == 0)
			file->eol = 1;
		return '\n';
	}
	if (c == '"')
		return lex_quoted();
	if (c == '{' || c == '}' || c == '=')
		return c;
	if (is_word_char(c))
		return lex_word(c, src);
	if (isprint(c))
		yyerror("unexpected character '%c'", c);
	else
		yyerror("unexpected byte 0x%02x", c);
	return skip_line();
}

static struct origin *
origin_new(const char *name, mode_t mode)
{
	struct origin	*o;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		return NULL;
	if ((o->name = strdup(name)) == NULL) {
		free(o);
		return NULL;
	}
	o->mode = mode;
	TAILQ_INSERT_TAIL(&origins, o, entry);
	return o;
}

/*
 * Opens name for reading and makes it the current input.  Returns NULL
 * after printing why it could not (the caller adds no message).
 */
static struct file *
pushfile(const char *name, int included)
{
	struct file	*nf;
	struct stat	 st;
	int		 fd = -1;

	if ((nf = calloc(1, sizeof(*nf))) == NULL ||
	    (nf->name = strdup(name)) == NULL) {
		free(nf);
		fprintf(stderr, "%s: out of memory\n", name);
		return NULL;
	}
	/* Non-blocking, so that naming a FIFO cannot hang the open. */
	if ((fd = open(name, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1) {
		if (included)
			yyerror("include \"%s\": %s", name, strerror(errno));
		else
			fprintf(stderr, "%s: %s\n", name, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		if (included)
			yyerror("include \"%s\": not a regular file", name);
		else
			fprintf(stderr, "%s: not a regular file\n", name);
		goto fail;
	}
	if (fcntl(fd, F_SETFL, 0) == -1 ||
	    (nf->stream = fdopen(fd, "r")) == NULL) {
		fprintf(stderr, "%s: %s\n", name, strerror(errno));
		goto fail;
	}
	fd = -1;
	if ((nf->origin = origin_new(name, st.st_mode & 07777)) == NULL) {
		fprintf(stderr, "%s: out of memory\n", name);
		goto fail;
	}
	nf->lineno = 1;
	TAILQ_INSERT_TAIL(&files, nf, entry);
	file = nf;
	return nf;
fail:
	if (fd != -1)
		close(fd);
	if (nf->stream != NULL)
		fclose(nf->stream);
	free(nf->name);
	free(nf);
	return NULL;
}

static void
file_free(struct file *f)
{
	fclose(f->stream);
	free(f->name);
	/* Pushed-back text may be a macro's secret value. */
	freezero(f->pushback, f->pushcap);
	free(f->pushsrc);
	free(f);
}

static int
popfile(void)
{
	struct file	*prev;

	if ((prev = TAILQ_PREV(file, file_stack, entry)) == NULL)
		return EOF;
	TAILQ_REMOVE(&files, file, entry);
	file_free(file);
	file = prev;
	return 0;
}

static void
include_file(const char *name)
{
	struct file	*f;
	char		*path;
	const char	*slash;
	int		 depth = 0;

	TAILQ_FOREACH(f, &files, entry)
		depth++;
	if (depth >= CONF_MAX_DEPTH) {
		yyerror("include \"%s\": includes nested too deep", name);
		return;
	}
	/* A relative name is relative to the including file. */
	slash = strrchr(file->name, '/');
	if (name[0] == '/' || slash == NULL)
		path = strdup(name);
	else if (asprintf(&path, "%.*s/%s", (int)(slash - file->name),
	    file->name, name) == -1)
		path = NULL;
	if (path == NULL) {
		yyerror("out of memory");
		return;
	}
	/*
	 * The parser reduced this statement without reading its newline;
	 * give the new file one, so its first line starts a statement.
	 */
	if (pushfile(path, 1) != NULL)
		lungetc('\n', NULL);
	free(path);
}

static struct sym *
symfind(const char *name)
{
	struct sym	*sym;

	TAILQ_FOREACH(sym, &symhead, entry)
		if (strcmp(sym->name, name) == 0)
			return sym;
	return NULL;
}

static void
symfree(struct sym *sym)
{
	TAILQ_REMOVE(&symhead, sym, entry);
	free(sym->name);
	freezero(sym->value, strlen(sym->value));
	free(sym);
}

static int
symset(const char *name, const char *value, int persist)
{
	struct sym	*sym;

	if ((sym = symfind(name)) != NULL) {
		if (sym->persist && !persist)
			return 0;	/* -D overrides the file */
		symfree(sym);
	}
	if ((sym = calloc(1, sizeof(*sym))) == NULL)
		return -1;
	if ((sym->name = strdup(name)) == NULL ||
	    (sym->value = strdup(value)) == NULL) {
		free(sym->name);
		free(sym);
		return -1;
	}
	sym->persist = persist;
	sym->origin = persist ? NULL : file->origin;
	TAILQ_INSERT_TAIL(&symhead, sym, entry);
	return 0;
}

/* Macros from the file die with the parse; -D ones stay for reloads. */
static void
symclear(void)
{
	struct sym	*sym, *next;

	TAILQ_FOREACH_SAFE(sym, &symhead, entry, next)
		if (!sym->persist)
			symfree(sym);
}

int
cmdline_symset(const char *arg)
{
	const char	*eq;
	char		*name;
	int		 rv;

	if ((eq = strchr(arg, '=')) == NULL || eq == arg)
		return -1;
	if ((name = strndup(arg, eq - arg)) == NULL)
		return -1;
	rv = symset(name, eq + 1, 1);
	free(name);
	return rv;
}

static void
secret_origin_check(struct origin *o)
{
	if (o == NULL || (o->mode & 077) == 0 || o->reported)
		return;
	o->reported = 1;
	errors++;
	fprintf(stderr, "%s: secrets in a file readable by group or others "
	    "(mode %04o); chmod 600 it\n", o->name, (unsigned)o->mode);
}

static int
in_range(int64_t v, int64_t min, int64_t max, const char *what)
{
	if (v >= min && v <= max)
		return 1;
	if (v == BAD_VALUE)
		return 0;
	yyerror("%s %lld out of range (%lld to %lld)", what, (long long)v,
	    (long long)min, (long long)max);
	return 0;
}

static void
copy_string(char *dst, size_t len, const char *src, const char *what)
{
	if (strlcpy(dst, src, len) >= len)
		yyerror("%s too long (at most %zu bytes)", what, len - 1);
}

/*
 * Stores a copy of s in *dst, wiping the old value.  The lexer's copy
 * is wiped with the arena at the end of the parse.
 */
static void
set_secret(char **dst, const char *s)
{
	if (*dst != NULL)
		freezero(*dst, strlen(*dst));
	if ((*dst = strdup(s)) == NULL)
		yyerror("out of memory");
}

/*
 * Every string the lexer hands the parser lives here until the parse
 * ends, so that tokens dropped by error recovery are neither leaked nor
 * left unwiped.  Takes s (NULL after a failed allocation).
 */
static char *
arena_keep(char *s)
{
	char	**grown;
	size_t	  cap;

	if (s == NULL) {
		yyerror("out of memory");
		return NULL;
	}
	if (narena == arena_cap) {
		cap = arena_cap == 0 ? 64 : arena_cap * 2;
		if ((grown = reallocarray(arena, cap, sizeof(*arena))) ==
		    NULL) {
			freezero(s, strlen(s));
			yyerror("out of memory");
			return NULL;
		}
		arena = grown;
		arena_cap = cap;
	}
	arena[narena++] = s;
	return s;
}

static void
arena_clear(void)
{
	while (narena > 0) {
		narena--;
		freezero(arena[narena], strlen(arena[narena]));
	}
	free(arena);
	arena = NULL;
	arena_cap = 0;
}

static void
listen_add(const char *host, int64_t port)
{
	struct listen_conf	*lc, *other;
	struct addrinfo		 hints, *ai;
	const char		*numeric = host;
	int			 rv;

	/* No DNS in the master: only literals, and localhost by fiat. */
	if (strcmp(host, "localhost") == 0)
		numeric = "127.0.0.1";
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
	if ((rv = getaddrinfo(numeric, NULL, &hints, &ai)) != 0) {
		yyerror("invalid listen address \"%s\"", host);
		return;
	}
	if ((lc = calloc(1, sizeof(*lc))) == NULL) {
		freeaddrinfo(ai);
		yyerror("out of memory");
		return;
	}
	memcpy(&lc->ss, ai->ai_addr, ai->ai_addrlen);
	lc->sslen = ai->ai_addrlen;
	freeaddrinfo(ai);
	lc->port = port;
	if (lc->ss.ss_family == AF_INET)
		((struct sockaddr_in *)&lc->ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&lc->ss)->sin6_port = htons(port);
	if (strlcpy(lc->host, host, sizeof(lc->host)) >= sizeof(lc->host)) {
		free(lc);
		yyerror("listen address too long");
		return;
	}
	TAILQ_FOREACH(other, &conf->listens, entry) {
		if (other->sslen == lc->sslen &&
		    memcmp(&other->ss, &lc->ss, lc->sslen) == 0) {
			yyerror("duplicate listen on %s port %u", host,
			    lc->port);
			free(lc);
			return;
		}
	}
	TAILQ_INSERT_TAIL(&conf->listens, lc, entry);
}

static const char *
scheme_name(enum storage_scheme s)
{
	switch (s) {
	case SCHEME_FILE:
		return "file";
	case SCHEME_S3:
		return "s3";
	case SCHEME_SFTP:
		return "sftp";
	default:
		return "unknown";
	}
}

static void
storage_begin(const char *url)
{
	const char		*name, *why;
	enum storage_scheme	 s;

	if (storage_seen)
		yyerror("storage already configured");
	storage_seen = 1;
	scheme = SCHEME_NONE;
	/* The backends' own grammar judges the URL. */
	if ((name = store_check_url(url, &why)) != NULL) {
		for (s = SCHEME_FILE; s <= SCHEME_SFTP; s++)
			if (strcmp(scheme_name(s), name) == 0)
				scheme = s;
	} else if (why != NULL)
		yyerror("%s", why);
	else
		yyerror("unknown storage scheme in \"%s\"; use file://, "
		    "s3:// or sftp://", url);
	copy_string(conf->storage_url, sizeof(conf->storage_url), url,
	    "storage URL");
}

/* Is this option allowed for the storage being configured? */
static int
storage_option(const char *option, enum storage_scheme wanted)
{
	if (scheme == wanted)
		return 1;
	if (scheme != SCHEME_NONE)
		yyerror("%s is not an option of %s storage", option,
		    scheme_name(scheme));
	return 0;
}

static void
storage_end(void)
{
	if (scheme == SCHEME_S3 && (conf->storage.access_key == NULL ||
	    conf->storage.secret_key == NULL))
		yyerror("s3 storage needs access-key and secret-key");
	if (scheme == SCHEME_SFTP && (conf->storage.identity[0] == '\0' ||
	    conf->storage.known_hosts[0] == '\0'))
		yyerror("sftp storage needs identity and known-hosts");
}

static void
sandbox_url(const char *url)
{
	conf->sandbox = SANDBOX_URL;
	if (strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0)
		yyerror("sandbox must be local or an http:// or https:// "
		    "URL");
	else
		copy_string(conf->sandbox_url, sizeof(conf->sandbox_url), url,
		    "sandbox URL");
	/* A ca-file belongs to the block of the URL it checks. */
	conf->sandbox_ca_file[0] = '\0';
}

static void
sandbox_ca_file(const char *path)
{
	if (path[0] != '/')
		yyerror("ca-file must be an absolute path");
	else if (strncmp(conf->sandbox_url, "http://", 7) == 0)
		yyerror("ca-file needs an https:// sandbox URL");
	else
		copy_string(conf->sandbox_ca_file,
		    sizeof(conf->sandbox_ca_file), path, "ca-file");
}

static void
upstream_begin(const char *name)
{
	struct upstream_conf	*u;

	upstream = NULL;
	TAILQ_FOREACH(u, &conf->upstreams, entry) {
		if (strcmp(u->name, name) == 0) {
			yyerror("duplicate upstream \"%s\"", name);
			return;
		}
	}
	if (*name == '\0') {
		yyerror("empty upstream name");
		return;
	}
	if ((u = calloc(1, sizeof(*u))) == NULL) {
		yyerror("out of memory");
		return;
	}
	copy_string(u->name, sizeof(u->name), name, "upstream name");
	conf_upstream_init(u);
	TAILQ_INSERT_TAIL(&conf->upstreams, u, entry);
	upstream = u;
}

/* Each url line is a replica (fe_pool.c); one written twice is a typo. */
static void
upstream_url(const char *url, int64_t weight)
{
	size_t	 i;

	if (strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0) {
		yyerror("upstream url must be an http:// or https:// URL");
		return;
	}
	if (upstream == NULL)
		return;
	if (strlen(url) >= sizeof(upstream->url)) {
		yyerror("url too long");
		return;
	}
	for (i = 0; i < conf_replicas(upstream) && upstream->url[0] != '\0';
	    i++)
		if (strcmp(conf_replica_url(upstream, i), url) == 0) {
			yyerror("upstream \"%s\": url \"%s\" twice",
			    upstream->name, url);
			return;
		}
	if (conf_replica_add(upstream, url, (int)weight) == -1)
		yyerror("upstream \"%s\": more than %d urls", upstream->name,
		    CONF_REPLICAS_MAX);
}

/* What an upstream's options say together, in any order. */
static void
upstream_end(void)
{
	char		 host[256];
	uint16_t	 port;
	size_t		 i;

	if (upstream == NULL)
		goto done;
	if (upstream->url[0] == '\0')
		yyerror("upstream \"%s\" needs a url", upstream->name);
	for (i = 0; upstream->url[0] != '\0' && i < conf_replicas(upstream);
	    i++)
		if (conf_url_host_port(conf_replica_url(upstream, i), host,
		    sizeof(host), &port) == -1)
			yyerror("upstream \"%s\": no host or a bad port in "
			    "\"%s\"", upstream->name,
			    conf_replica_url(upstream, i));
	if (version_seen && upstream->api != DIALECT_ANTHROPIC)
		yyerror("upstream \"%s\": anthropic-version needs api "
		    "anthropic", upstream->name);
	if (upstream->native_responses && upstream->api != DIALECT_OPENAI)
		yyerror("upstream \"%s\": responses needs api openai",
		    upstream->name);
done:
	upstream = NULL;
	version_seen = 0;
}

static void
model_begin(const char *name, const char *via)
{
	struct model_conf	*m;
	struct upstream_conf	*u;

	model = NULL;
	TAILQ_FOREACH(m, &conf->models, entry) {
		if (strcmp(m->name, name) == 0) {
			yyerror("duplicate model \"%s\"", name);
			return;
		}
	}
	TAILQ_FOREACH(u, &conf->upstreams, entry)
		if (strcmp(u->name, via) == 0)
			break;
	if (u == NULL) {
		yyerror("model \"%s\": unknown upstream \"%s\"", name, via);
		return;
	}
	if (*name == '\0') {
		yyerror("empty model name");
		return;
	}
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		yyerror("out of memory");
		return;
	}
	conf_model_init(m);
	copy_string(m->name, sizeof(m->name), name, "model name");
	strlcpy(m->upstream, u->name, sizeof(m->upstream));
	TAILQ_INSERT_TAIL(&conf->models, m, entry);
	model = m;
}

static void
model_end(void)
{
	if (model != NULL && model->text_only && model->pdf_as_text)
		yyerror("model \"%s\": pdf-as-text and text-only exclude "
		    "each other", model->name);
	model = NULL;
}

/* What only the whole file can tell. */
static void
final_checks(const char *name)
{
	uint16_t	 ports[CONF_PORTS_MAX + 1];

	if (conf->database == NULL) {
		fprintf(stderr, "%s: no database configured\n", name);
		errors++;
	}
	if (!storage_seen) {
		fprintf(stderr, "%s: no storage configured\n", name);
		errors++;
	}
	if (TAILQ_EMPTY(&conf->listens) && errors == 0)
		listen_add("127.0.0.1", 8080);
	/* Each is a Landlock rule of the frontends. */
	if (conf_upstream_ports(conf, ports, CONF_PORTS_MAX + 1) >
	    CONF_PORTS_MAX) {
		fprintf(stderr, "%s: upstreams on more than %d ports\n", name,
		    CONF_PORTS_MAX);
		errors++;
	}
}

static void
parse_cleanup(void)
{
	struct origin	*o;

	while (file != NULL && popfile() != EOF)
		;
	if (file != NULL) {
		TAILQ_REMOVE(&files, file, entry);
		file_free(file);
		file = NULL;
	}
	symclear();
	arena_clear();
	while ((o = TAILQ_FIRST(&origins)) != NULL) {
		TAILQ_REMOVE(&origins, o, entry);
		free(o->name);
		free(o);
	}
}

struct depotd_conf *
parse_config(const char *filename, int verbose)
{
	struct depotd_conf	*result;

	(void)verbose;
	errors = 0;
	lex_reported = 0;
	scheme = SCHEME_NONE;
	storage_seen = 0;
	upstream = NULL;
	model = NULL;
	version_seen = 0;
	if ((conf = conf_new()) == NULL) {
		fprintf(stderr, "%s: out of memory\n", filename);
		return NULL;
	}
	if (pushfile(filename, 0) == NULL) {
		parse_cleanup();
		conf_free(conf);
		conf = NULL;
		return NULL;
	}
	yyparse();
	final_checks(filename);
	parse_cleanup();
	result = conf;
	conf = NULL;
	if (errors != 0) {
		conf_free(result);
		return NULL;
	}
	return result;
}
