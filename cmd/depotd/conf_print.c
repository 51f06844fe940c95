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
 * conf_print.c: `depotd -nv': the configuration in the depotd.conf(5)
 * grammar, every default spelled out, every secret masked, so that
 * what it prints parses again to the same configuration.
 */
#include <sys/types.h>
#include <sys/queue.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "config.h"
#include "conf_int.h"

#define SECRET_PLACEHOLDER	"********"

static void
print_size(FILE *fp, int64_t v)
{
	char	 buf[32];

	format_units(buf, sizeof(buf), v, unit_size);
	fputs(buf, fp);
}

static void
print_duration(FILE *fp, int64_t v)
{
	char	 buf[32];

	format_units(buf, sizeof(buf), v, unit_duration);
	fputs(buf, fp);
}

static void
print_quoted(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

struct mask_state {
	const char	*src;
	size_t		 copied;
	FILE		*out;
};

static void
mask_span(void *arg, size_t start, size_t end)
{
	struct mask_state	*ms = arg;

	fwrite(ms->src + ms->copied, 1, start - ms->copied, ms->out);
	fputs(SECRET_PLACEHOLDER, ms->out);
	ms->copied = end;
}

/* The conninfo with each password replaced by the placeholder. */
static char *
conninfo_masked(const char *conninfo)
{
	struct mask_state	 ms;
	char			*buf = NULL;
	size_t			 len = 0;

	if ((ms.out = open_memstream(&buf, &len)) == NULL)
		return NULL;
	ms.src = conninfo;
	ms.copied = 0;
	conninfo_passwords(conninfo, mask_span, &ms);
	fputs(conninfo + ms.copied, ms.out);
	if (fclose(ms.out) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void
print_listens(FILE *fp, const struct depotd_conf *c)
{
	const struct listen_conf	*l;

	TAILQ_FOREACH(l, &c->listens, entry)
		fprintf(fp, "listen on %s port %u\n", l->host, l->port);
}

static void
print_database(FILE *fp, const struct depotd_conf *c)
{
	char	*masked;

	if (c->database == NULL)
		return;
	fputs("database ", fp);
	if ((masked = conninfo_masked(c->database)) != NULL) {
		print_quoted(fp, masked);
		free(masked);
	} else
		print_quoted(fp, SECRET_PLACEHOLDER);
	fprintf(fp, " pool %d\n", c->db_pool);
}

static void
print_secret(FILE *fp, const char *keyword, const char *secret)
{
	if (secret != NULL)
		fprintf(fp, "\t%s \"%s\"\n", keyword, SECRET_PLACEHOLDER);
}

static void
print_storage(FILE *fp, const struct depotd_conf *c)
{
	if (c->storage_url[0] == '\0')
		return;
	fputs("storage ", fp);
	print_quoted(fp, c->storage_url);
	if (strncmp(c->storage_url, "s3://", 5) == 0) {
		fputs(" {\n", fp);
		if (c->storage.endpoint[0] != '\0') {
			fputs("\tendpoint ", fp);
			print_quoted(fp, c->storage.endpoint);
			fputc('\n', fp);
		}
		fputs("\tregion ", fp);
		print_quoted(fp, c->storage.region);
		fputc('\n', fp);
		if (c->storage.access_key != NULL) {
			fputs("\taccess-key ", fp);
			print_quoted(fp, c->storage.access_key);
			fputc('\n', fp);
		}
		print_secret(fp, "secret-key", c->storage.secret_key);
		print_secret(fp, "session-token", c->storage.session_token);
		if (c->storage.path_style)
			fputs("\tpath-style\n", fp);
		fputs("\tpart-size ", fp);
		print_size(fp, c->storage.part_size);
		fprintf(fp, "\n\tmax-transfers %d\n}\n",
		    c->storage.max_transfers);
	} else if (strncmp(c->storage_url, "sftp://", 7) == 0) {
		fputs(" {\n\tidentity ", fp);
		print_quoted(fp, c->storage.identity);
		fputc('\n', fp);
		print_secret(fp, "passphrase", c->storage.passphrase);
		fputs("\tknown-hosts ", fp);
		print_quoted(fp, c->storage.known_hosts);
		fputs("\n\tkeepalive ", fp);
		print_duration(fp, c->storage.keepalive);
		fputs("\n}\n", fp);
	} else
		fputc('\n', fp);
}

static void
print_files_http(FILE *fp, const struct depotd_conf *c)
{
	fputs("files {\n\tmax-size ", fp);
	print_size(fp, c->max_size);
	fputs("\n\tretention ", fp);
	print_duration(fp, c->retention);
	fputs("\n\tsweep-interval ", fp);
	print_duration(fp, c->sweep_interval);
	fprintf(fp, "\n\tmax-filename %d\n\tmax-uploads-per-key %d\n",
	    c->max_filename, c->max_uploads_per_key);
	fputs("\twriting-grace ", fp);
	print_duration(fp, c->writing_grace);
	fprintf(fp, "\n\textract-pages %d\n\textract-size ",
	    c->extract_pages);
	print_size(fp, c->extract_size);
	fputs("\n}\n", fp);
	fprintf(fp, "containers {\n\texpires-after %lldm\n\tmax-lifetime ",
	    (long long)c->cntr_expires_after);
	print_duration(fp, c->cntr_max_lifetime);
	fprintf(fp, "\n\tmax-per-key %d\n\tmax-per-workspace %d\n}\n",
	    c->cntr_max_per_key, c->cntr_max_per_workspace);

	fputs("http {\n\tmax-header-size ", fp);
	print_size(fp, c->http.max_header_bytes);
	fprintf(fp, "\n\tmax-headers %d\n\theader-timeout ",
	    c->http.max_headers);
	print_duration(fp, c->http.header_timeout);
	fputs("\n\tidle-timeout ", fp);
	print_duration(fp, c->http.idle_timeout);
	fputs("\n\tbody-timeout ", fp);
	print_duration(fp, c->http.body_timeout);
	fputs("\n\tmin-body-rate ", fp);
	print_size(fp, c->http.min_body_rate);
	fprintf(fp, "\n\tmax-connections %d\n"
	    "\tmax-connections-per-address %d\n\tmax-request-size ",
	    c->http.max_conns, c->http.max_conns_per_addr);
	print_size(fp, c->http.max_request_size);
	fprintf(fp, "\n\tmax-json-values %lld\n\tmax-json-memory ",
	    (long long)c->http.max_json_values);
	print_size(fp, c->http.max_json_memory);
	fputs("\n}\n", fp);
}

/* An https block's own CA bundle, if it names one. */
static void
print_ca_file(FILE *fp, const char *path)
{
	if (path[0] == '\0')
		return;
	fputs("\tca-file ", fp);
	print_quoted(fp, path);
	fputc('\n', fp);
}

/* The options every sandbox takes, inside its block. */
static void
print_sandbox_limits(FILE *fp, const struct depotd_conf *c)
{
	fputs("\texec-timeout ", fp);
	print_duration(fp, c->exec_timeout);
	fprintf(fp, "\n\tmax-output-files %d\n\tmax-output-size ",
	    c->max_output_files);
	print_size(fp, c->max_output_size);
	fprintf(fp, "\n\tmax-sessions %d\n\tmax-sessions-per-key %d\n"
	    "\ttransfer-timeout ", c->max_sessions,
	    conf_sessions_per_key(c));
	print_duration(fp, c->transfer_timeout);
	fputs("\n}\n", fp);
}

static void
print_sandbox(FILE *fp, const struct depotd_conf *c)
{
	switch (c->sandbox) {
	case SANDBOX_NONE:
		fputs("no sandbox\n", fp);
		break;
	case SANDBOX_LOCAL:
		fputs("sandbox local {\n", fp);
		if (c->sandbox_dir[0] != '\0') {
			fputs("\tdirectory ", fp);
			print_quoted(fp, c->sandbox_dir);
			fputc('\n', fp);
		}
		print_sandbox_limits(fp, c);
		break;
	case SANDBOX_URL:
		fputs("sandbox ", fp);
		print_quoted(fp, c->sandbox_url);
		fputs(" {\n", fp);
		print_secret(fp, "token", c->sandbox_token);
		print_ca_file(fp, c->sandbox_ca_file);
		print_sandbox_limits(fp, c);
		break;
	}
	fprintf(fp, "max-tool-iterations %d\n", c->max_tool_iterations);
	fputs("max-answer-size ", fp);
	print_size(fp, c->max_answer_size);
	fprintf(fp, "\nmax-tool-calls %d\nrequest-timeout ",
	    c->max_tool_calls);
	print_duration(fp, c->request_timeout);
	fputc('\n', fp);
}

static void
print_upstream_limits(FILE *fp, const struct upstream_conf *u)
{
	fputs("\ttimeout ", fp);
	print_duration(fp, u->timeout);
	fputs("\n\tconnect-timeout ", fp);
	print_duration(fp, u->connect_timeout);
	fputs("\n\tidle-timeout ", fp);
	print_duration(fp, u->idle_timeout);
	fputc('\n', fp);
	print_ca_file(fp, u->ca_file);
	if (u->api == DIALECT_ANTHROPIC) {
		fputs("\tanthropic-version ", fp);
		print_quoted(fp, u->anthropic_version);
		fputc('\n', fp);
	}
	if (u->native_responses)
		fputs("\tresponses\n", fp);
	if (!u->discover)
		fputs("\tno discover\n", fp);
	fputs("}\n", fp);
}

/* 1 when a model has no option but its defaults (conf_model_init). */
static int
model_is_plain(const struct model_conf *m)
{
	struct model_conf	 plain;

	memset(&plain, 0, sizeof(plain));
	conf_model_init(&plain);
	return m->remote_name[0] == '\0' && !m->text_only &&
	    !m->pdf_as_text && !m->native_code_execution &&
	    m->max_tokens == plain.max_tokens && m->max_tool_iterations == 0;
}

static void
print_model_options(FILE *fp, const struct model_conf *m)
{
	struct model_conf	 plain;

	memset(&plain, 0, sizeof(plain));
	conf_model_init(&plain);
	if (m->remote_name[0] != '\0') {
		fputs("\tremote-name ", fp);
		print_quoted(fp, m->remote_name);
		fputc('\n', fp);
	}
	if (m->text_only)
		fputs("\ttext-only\n", fp);
	if (m->pdf_as_text)
		fputs("\tpdf-as-text\n", fp);
	if (m->native_code_execution)
		fputs("\tnative-code-execution\n", fp);
	if (m->max_tokens != plain.max_tokens)
		fprintf(fp, "\tmax-tokens %d\n", m->max_tokens);
	if (m->max_tool_iterations != 0)
		fprintf(fp, "\tmax-tool-iterations %d\n",
		    m->max_tool_iterations);
}

static void
print_upstreams_models(FILE *fp, const struct depotd_conf *c)
{
	const struct upstream_conf	*u;
	const struct model_conf		*m;
	size_t				 i;

	TAILQ_FOREACH(u, &c->upstreams, entry) {
		fputs("upstream ", fp);
		print_quoted(fp, u->name);
		fputs(" {", fp);
		for (i = 0; i < conf_replicas(u); i++) {
			fputs("\n\turl ", fp);
			print_quoted(fp, conf_replica_url(u, i));
			if (conf_replica_weight(u, i) != 1)
				fprintf(fp, " weight %d",
				    conf_replica_weight(u, i));
		}
		if (u->max_failover != 2)
			fprintf(fp, "\n\tfailover %d", u->max_failover);
		fprintf(fp, "\n\tapi %s\n",
		    u->api == DIALECT_ANTHROPIC ? "anthropic" : "openai");
		print_secret(fp, "api-key", u->api_key);
		print_upstream_limits(fp, u);
	}
	TAILQ_FOREACH(m, &c->models, entry) {
		fputs("model ", fp);
		print_quoted(fp, m->name);
		fputs(" upstream ", fp);
		print_quoted(fp, m->upstream);
		if (model_is_plain(m)) {
			fputc('\n', fp);
			continue;
		}
		fputs(" {\n", fp);
		print_model_options(fp, m);
		fputs("}\n", fp);
	}
}

/* Only when set: a configuration without limits prints as before. */
static void
print_limits(FILE *fp, const struct limits_conf *l)
{
	static const char	*names[] = { "requests-per-minute",
	    "tokens-per-minute", "concurrency", "tokens-per-day",
	    "tokens-per-month" };
	int64_t			 v[5];
	size_t			 i;
	int			 any = 0;

	v[0] = l->requests_per_minute;
	v[1] = l->tokens_per_minute;
	v[2] = l->concurrency;
	v[3] = l->tokens_per_day;
	v[4] = l->tokens_per_month;
	for (i = 0; i < 5; i++)
		any |= v[i] != 0;
	if (!any)
		return;
	fputs("limits {\n", fp);
	for (i = 0; i < 5; i++)
		if (v[i] != 0)
			fprintf(fp, "\t%s %lld\n", names[i], (long long)v[i]);
	fputs("}\n", fp);
}

void
conf_print(FILE *fp, const struct depotd_conf *c)
{
	print_listens(fp, c);
	fprintf(fp, "prefork %d\nfrontend-timeout ", c->prefork);
	print_duration(fp, c->frontend_timeout);
	fputs("\nuser ", fp);
	print_quoted(fp, c->user);
	fputs("\nstorage user ", fp);
	print_quoted(fp, c->storage_user);
	if (c->chroot[0] != '\0') {
		fputs("\nchroot ", fp);
		print_quoted(fp, c->chroot);
	}
	fputs("\ncontrol socket ", fp);
	print_quoted(fp, c->control_socket);
	fputc('\n', fp);
	print_database(fp, c);
	print_storage(fp, c);
	print_files_http(fp, c);
	print_limits(fp, &c->limits);
	print_sandbox(fp, c);
	if (c->admin_key != NULL)
		fprintf(fp, "admin-key \"%s\"\n", SECRET_PLACEHOLDER);
	print_upstreams_models(fp, c);
}

