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
 * fe_metrics.c: GET /metrics, in Prometheus' text format.
 *
 * Counters are this frontend's own (each process counts what it
 * served); every sample carries a frontend label so that scrapes of
 * different frontends add up.  The database and store gauges are the
 * storage helper's answer, read as /healthz reads it (fe_health.c).
 */
#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <json-c/json.h>

#include "log.h"
#include "frontend.h"

#define ROUTES_MAX	32

struct route_count {
	const char	*route;		/* a string literal of a route */
	int		 status;
	uint64_t	 count;
};

/*
 * Latency buckets, upper bounds in microseconds: from a cached answer's
 * few milliseconds to a long generation's minutes.  Counts are kept per
 * bucket and summed into Prometheus' cumulative form when scraped.
 */
static const int64_t	 bucket_us[] = {
	5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000,
	2500000, 5000000, 10000000, 30000000, 60000000, 120000000, 300000000
};
#define NBUCKETS	(sizeof(bucket_us) / sizeof(bucket_us[0]))

struct latency {
	uint64_t	 in_bucket[NBUCKETS + 1];	/* the last: +Inf */
	uint64_t	 count;
	int64_t		 sum_us;
};

/* A configured model's counters (a name is kept until exit). */
struct model_count {
	char		 model[128];
	uint64_t	 requests, errors, tokens_in, tokens_out;
	struct latency	 duration;	/* request start to answer end */
	struct latency	 ttfb;		/* to the upstream's first byte */
};

#define MODELS_COUNTED	128

static struct route_count	 counts[ROUTES_MAX * 8];
static struct model_count	 models[MODELS_COUNTED];
static int			 nmodels;
static int			 ncounts;
static uint64_t			 bytes_in, bytes_out;

void
fe_metrics_count(const struct http_request *req)
{
	const char	*route = req->route ? req->route : "unrouted";
	int		 i;

	bytes_in += req->bytes_in;
	bytes_out += req->bytes_out;
	for (i = 0; i < ncounts; i++)
		if (counts[i].status == req->status &&
		    strcmp(counts[i].route, route) == 0) {
			counts[i].count++;
			return;
		}
	if (ncounts == (int)(sizeof(counts) / sizeof(counts[0])))
		return;
	counts[ncounts].route = route;
	counts[ncounts].status = req->status;
	counts[ncounts].count = 1;
	ncounts++;
}

static void
fe_metrics_observe(struct latency *l, int64_t us)
{
	size_t	 i;

	if (us < 0)
		return;
	for (i = 0; i < NBUCKETS && us > bucket_us[i]; i++)
		;
	l->in_bucket[i]++;
	l->count++;
	l->sum_us += us;
}

void
fe_metrics_model(const struct model_sample *ms)
{
	struct model_count	*mc = NULL;
	int			 i;

	if (ms->model == NULL || *ms->model == '\0')
		return;
	for (i = 0; i < nmodels && mc == NULL; i++)
		if (strcmp(models[i].model, ms->model) == 0)
			mc = &models[i];
	if (mc == NULL) {
		if (nmodels == MODELS_COUNTED)
			return;
		mc = &models[nmodels++];
		strlcpy(mc->model, ms->model, sizeof(mc->model));
	}
	mc->requests++;
	mc->errors += ms->error != 0;
	mc->tokens_in += ms->tokens_in > 0 ? (uint64_t)ms->tokens_in : 0;
	mc->tokens_out += ms->tokens_out > 0 ? (uint64_t)ms->tokens_out : 0;
	fe_metrics_observe(&mc->duration, ms->duration_us);
	fe_metrics_observe(&mc->ttfb, ms->ttfb_us);
}

/* A label value: backslash, quote and newline escaped. */
static void
fe_metrics_label(char *out, size_t len, const char *s)
{
	size_t	 n = 0;

	for (; *s != '\0' && n + 3 < len; s++) {
		if (*s == '\\' || *s == '"' || *s == '\n')
			out[n++] = '\\';
		out[n++] = *s == '\n' ? 'n' : *s;
	}
	out[n] = '\0';
}

static void
fe_metrics_models(struct evbuffer *b, int n)
{
	static const char	*names[] = { "requests", "errors",
				    "tokens_in", "tokens_out" };
	char			 label[300];
	uint64_t		 v;
	int			 i, k;

	for (k = 0; k < 4; k++) {
		evbuffer_add_printf(b, "# TYPE depotd_model_%s_total "
		    "counter\n", names[k]);
		for (i = 0; i < nmodels; i++) {
			v = k == 0 ? models[i].requests : k == 1 ?
			    models[i].errors : k == 2 ? models[i].tokens_in :
			    models[i].tokens_out;
			fe_metrics_label(label, sizeof(label), models[i].model);
			evbuffer_add_printf(b, "depotd_model_%s_total{"
			    "frontend=\"%d\",model=\"%s\"} %" PRIu64 "\n",
			    names[k], n, label, v);
		}
	}
}

static void
fe_metrics_histogram(struct evbuffer *b, const char *name, int n,
    const char *label, const struct latency *l)
{
	uint64_t	 below = 0;
	size_t		 i;

	for (i = 0; i <= NBUCKETS; i++) {
		below += l->in_bucket[i];
		if (i < NBUCKETS)
			evbuffer_add_printf(b, "depotd_model_%s_seconds_bucket{"
			    "frontend=\"%d\",model=\"%s\",le=\"%g\"} %"
			    PRIu64 "\n", name, n, label,
			    bucket_us[i] / 1e6, below);
		else
			evbuffer_add_printf(b, "depotd_model_%s_seconds_bucket{"
			    "frontend=\"%d\",model=\"%s\",le=\"+Inf\"} %"
			    PRIu64 "\n", name, n, label, below);
	}
	evbuffer_add_printf(b, "depotd_model_%s_seconds_sum{frontend=\"%d\","
	    "model=\"%s\"} %.6f\n"
	    "depotd_model_%s_seconds_count{frontend=\"%d\",model=\"%s\"} %"
	    PRIu64 "\n", name, n, label, l->sum_us / 1e6, name, n, label,
	    l->count);
}

static void
fe_metrics_latencies(struct evbuffer *b, int n)
{
	char	 label[300];
	int	 i;

	evbuffer_add_printf(b, "# HELP depotd_model_duration_seconds "
	    "Model requests, from the request to the answer's end.\n"
	    "# TYPE depotd_model_duration_seconds histogram\n");
	for (i = 0; i < nmodels; i++) {
		fe_metrics_label(label, sizeof(label), models[i].model);
		fe_metrics_histogram(b, "duration", n, label,
		    &models[i].duration);
	}
	evbuffer_add_printf(b, "# HELP depotd_model_ttfb_seconds "
	    "Model requests, from the request to the upstream's first "
	    "byte.\n"
	    "# TYPE depotd_model_ttfb_seconds histogram\n");
	for (i = 0; i < nmodels; i++) {
		fe_metrics_label(label, sizeof(label), models[i].model);
		fe_metrics_histogram(b, "ttfb", n, label, &models[i].ttfb);
	}
}

static void
fe_metrics_done(void *arg, struct imsg *imsg)
{
	struct api_req		*ar = arg;
	struct health_msg	 hm;
	struct evbuffer		*b;
	int			 i, n = fe.instance;
	size_t			 len;
	char			*text;

	fe_health_read(ar, imsg, &hm);
	if ((b = evbuffer_new()) == NULL) {
		fe_reply_error(ar, 503, NULL, "out of memory");
		return;
	}
	evbuffer_add_printf(b, "# HELP depotd_requests_total HTTP requests "
	    "served, by route and status.\n"
	    "# TYPE depotd_requests_total counter\n");
	for (i = 0; i < ncounts; i++)
		evbuffer_add_printf(b, "depotd_requests_total{frontend=\"%d\","
		    "route=\"%s\",status=\"%d\"} %" PRIu64 "\n", n,
		    counts[i].route, counts[i].status, counts[i].count);
	evbuffer_add_printf(b, "# TYPE depotd_bytes_in_total counter\n"
	    "depotd_bytes_in_total{frontend=\"%d\"} %" PRIu64 "\n"
	    "# TYPE depotd_bytes_out_total counter\n"
	    "depotd_bytes_out_total{frontend=\"%d\"} %" PRIu64 "\n"
	    "# TYPE depotd_up gauge\n"
	    "depotd_up{frontend=\"%d\"} 1\n"
	    "# TYPE depotd_database_up gauge\n"
	    "depotd_database_up %d\n"
	    "# TYPE depotd_store_up gauge\n"
	    "depotd_store_up %d\n",
	    n, bytes_in, n, bytes_out, n, hm.db_up, hm.store_up);
	fe_metrics_models(b, n);
	fe_metrics_latencies(b, n);
	len = evbuffer_get_length(b);
	text = (char *)evbuffer_pullup(b, -1);
	http_reply(ar->req, 200, "text/plain; version=0.0.4", text, len);
	evbuffer_free(b);
}

void
fe_metrics_route(struct api_req *ar)
{
	ar->req->route = "metrics";
	if (ar->req->method != HTTP_M_GET) {
		fe_reply_error(ar, 405, NULL, "use GET");
		return;
	}
	ar->pending = fe_storage_request(IMSG_HEALTH_REQ, -1, NULL, 0,
	    fe_metrics_done, ar);
}
