// Copyright (c) 2026 The depotd authors
//
// Permission to use, copy, modify, and distribute this software for any
// purpose with or without fee is hereby granted, provided that the above
// copyright notice and this permission notice appear in all copies.
//
// THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
// WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
// MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
// ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
// WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
// ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
// OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.

// regress/limits/limits.mjs PART: one part of the limits suite through
// the official SDKs (openai 7, @anthropic-ai/sdk 1), from the suite's
// environment: DEPOT_URL, DEPOT_URL_B (a second host), DOUBLE_URL (the
// upstream double's control routes), LIMIT_N (the
// default requests per minute), KEY_* and SDK_MODULES.  Prints TAP
// lines; a part that needs numbers for the shell prints "# NAME=VALUE".

import { loadSdk, need, reporter, failed } from '../harness/sdk.mjs';

const modules = need('SDK_MODULES');
const url = need('DEPOT_URL');
const part = process.argv[2];
const OpenAI = loadSdk(modules, 'openai').mod.OpenAI;
const anth = loadSdk(modules, '@anthropic-ai/sdk').mod;
const Anthropic = anth.Anthropic ?? anth.default;
const t = reporter(`limits ${part}`);

const header = (h, name) => h == null ? null :
    (typeof h.get === 'function' ? h.get(name) : h[name]) ?? null;

function openai(key, opts = {}, base = url) {
	return new OpenAI({ baseURL: base + '/v1', apiKey: key,
	    maxRetries: 0, ...opts });
}

function anthropic(key, opts = {}, base = url) {
	return new Anthropic({ baseURL: base, apiKey: key, maxRetries: 0,
	    ...opts });
}

const chat = (c, text = 'hello') => c.chat.completions.create({
    model: 'm', messages: [{ role: 'user', content: text }] }).withResponse();
const message = (c, text = 'hello') => c.messages.create({ model: 'm',
    max_tokens: 64, messages: [{ role: 'user', content: text }] })
    .withResponse();

async function outcome(p) {
	try {
		const { data, response } = await p;
		return { ok: true, data, headers: response.headers };
	} catch (e) {
		return { ok: false, err: e, headers: e.headers };
	}
}

// N answers, then the 429, with the providers' headers on each.
async function openaiRate() {
	const n = Number(need('LIMIT_N'));
	const c = openai(need('KEY_OPENAI'));
	let answered = 0, remaining = [];
	for (let i = 0; i < n; i++) {
		const r = await outcome(chat(c));
		if (!r.ok)
			break;
		answered++;
		remaining.push(Number(header(r.headers,
		    'x-ratelimit-remaining-requests')));
		if (i === 0)
			t.ok(header(r.headers, 'x-ratelimit-limit-requests') ===
			    String(n), 'openai: x-ratelimit-limit-requests on ' +
			    'an answer is the limit',
			    header(r.headers, 'x-ratelimit-limit-requests'));
	}
	t.ok(answered === n, `openai: ${n} requests answered under a limit ` +
	    `of ${n} per minute`, answered);
	t.ok(JSON.stringify(remaining) === JSON.stringify(
	    [...Array(n).keys()].map((i) => n - 1 - i)),
	    'openai: x-ratelimit-remaining-requests counts down to 0',
	    JSON.stringify(remaining));
	const r = await outcome(chat(c));
	t.ok(!r.ok && r.err instanceof OpenAI.RateLimitError &&
	    r.err.status === 429, `openai: request ${n + 1} is a ` +
	    'RateLimitError (429)', r.ok ? 'answered' : r.err.status);
	if (r.ok)
		return;
	const body = r.err.error ?? {};
	t.ok(body.code === 'rate_limit_exceeded' && body.type === 'requests' &&
	    body.param === null && typeof body.message === 'string',
	    'openai: the body is {message, type "requests", param null, ' +
	    'code "rate_limit_exceeded"}', JSON.stringify(body));
	const ra = Number(header(r.headers, 'retry-after'));
	t.ok(ra >= 1 && ra <= 60, 'openai: retry-after is 1 to 60 seconds',
	    header(r.headers, 'retry-after'));
	t.ok(header(r.headers, 'x-ratelimit-remaining-requests') === '0' &&
	    /^(\d+m)?\d+s$/.test(header(r.headers,
	    'x-ratelimit-reset-requests') ?? ''),
	    'openai: the 429 says 0 remaining and a reset like "17s"',
	    `${header(r.headers, 'x-ratelimit-remaining-requests')} ` +
	    `${header(r.headers, 'x-ratelimit-reset-requests')}`);
}

async function anthropicRate() {
	const n = Number(need('LIMIT_N'));
	const c = anthropic(need('KEY_ANTHROPIC'));
	let answered = 0, last = null;
	for (let i = 0; i < n; i++) {
		const r = await outcome(message(c));
		if (!r.ok)
			break;
		answered++;
		last = r.headers;
	}
	t.ok(answered === n, `anthropic: ${n} requests answered under a ` +
	    `limit of ${n} per minute`, answered);
	t.ok(header(last, 'anthropic-ratelimit-requests-limit') === String(n) &&
	    header(last, 'anthropic-ratelimit-requests-remaining') === '0',
	    'anthropic: the last answer says limit N, 0 remaining',
	    `${header(last, 'anthropic-ratelimit-requests-limit')} ` +
	    `${header(last, 'anthropic-ratelimit-requests-remaining')}`);
	const reset = Date.parse(header(last,
	    'anthropic-ratelimit-requests-reset') ?? '');
	t.ok(reset > Date.now() - 2000 && reset <= Date.now() + 61000,
	    'anthropic: requests-reset is an RFC 3339 time within the minute',
	    header(last, 'anthropic-ratelimit-requests-reset'));
	const r = await outcome(message(c));
	t.ok(!r.ok && r.err instanceof Anthropic.RateLimitError &&
	    r.err.status === 429, `anthropic: request ${n + 1} is a ` +
	    'RateLimitError (429)', r.ok ? 'answered' : r.err.status);
	if (r.ok)
		return;
	const body = r.err.error ?? {};
	t.ok(body.type === 'error' && body.error?.type === 'rate_limit_error' &&
	    typeof body.error?.message === 'string',
	    'anthropic: the body is {type "error", error {type ' +
	    '"rate_limit_error", message}}', JSON.stringify(body));
	t.ok(Number(header(r.headers, 'retry-after')) >= 1,
	    'anthropic: the 429 has retry-after', header(r.headers,
	    'retry-after'));
}

// One slot: a second request waits out retry-after, and is answered.
async function retries() {
	const key = need('KEY_SLOT');
	const script = await fetch(need('DOUBLE_URL') + '/__script', {
	    method: 'POST', body: JSON.stringify({ turns: [
	    { think_ms: 2000 }] }) });
	t.ok(script.status === 204, 'the double takes a slow turn',
	    script.status);
	const slow = outcome(chat(openai(key)));
	await new Promise((res) => setTimeout(res, 300));
	const started = Date.now();
	const first = await outcome(chat(openai(key)));
	t.ok(!first.ok && first.err.status === 429 &&
	    header(first.headers, 'retry-after') === '1',
	    'concurrency 1: a second request at once is a 429 with ' +
	    'retry-after 1', first.ok ? 'answered' : first.err.status);
	const again = await outcome(chat(openai(key, { maxRetries: 4 })));
	const waited = Date.now() - started;
	t.ok(again.ok, 'concurrency 1: with retries, the SDK is answered ' +
	    'once the slot is free', again.ok ? '' : again.err.status);
	t.ok(waited >= 1000, 'concurrency 1: the SDK waited out retry-after ' +
	    '(at least 1 s)', `${waited} ms`);
	t.ok((await slow).ok, 'concurrency 1: the slow request is answered');
}

// Until the budget stops it; prints what each answer took.
async function budget(key, bases) {
	const clients = bases.map((b) => openai(key, {}, b));
	let used = 0, most = 0, answered = 0, stop = null;
	let refusedInARow = 0;
	for (let i = 0; i < 400; i++) {
		const r = await outcome(chat(clients[i % clients.length],
		    'one two three'));
		if (!r.ok) {
			// A share out elsewhere comes back within ~1.1 s.
			stop = r.err;
			if (++refusedInARow > clients.length)
				break;
			await new Promise((res) => setTimeout(res, 1500));
			continue;
		}
		refusedInARow = 0;
		stop = null;
		const u = r.data.usage;
		const took = u.prompt_tokens + u.completion_tokens;
		used += took;
		most = Math.max(most, took);
		answered++;
	}
	console.log(`# used=${used} most=${most} answered=${answered}`);
	return { used, most, answered, stop };
}

async function budgetOne() {
	const b = Number(need('BUDGET'));
	const r = await budget(need('KEY_BUDGET'), [url]);
	t.ok(r.stop instanceof OpenAI.RateLimitError &&
	    r.stop.error?.code === 'insufficient_quota' &&
	    r.stop.error?.type === 'insufficient_quota',
	    'budget, one host: openai stops with 429 insufficient_quota',
	    r.stop ? JSON.stringify(r.stop.error) : 'never stopped');
	// Sequential: a request starts only while some budget is left.
	t.ok(r.used >= b && r.used < b + r.most,
	    `budget, one host: ${r.used} tokens used of ${b}, overshoot ` +
	    `under one answer (${r.most})`, r.used);
	const a = await outcome(message(anthropic(need('KEY_BUDGET'))));
	t.ok(!a.ok && a.err instanceof Anthropic.BadRequestError &&
	    a.err.error?.error?.type === 'invalid_request_error',
	    'budget, one host: anthropic gets 400 invalid_request_error',
	    a.ok ? 'answered' : JSON.stringify(a.err.error));
}

async function budgetTwo() {
	const b = Number(need('BUDGET'));
	const r = await budget(need('KEY_BUDGET2'), [url, need('DEPOT_URL_B')]);
	const share = Number(need('SHARE_BOUND'));
	t.ok(r.stop?.error?.code === 'insufficient_quota',
	    'budget, two hosts: the budget stops the key on both',
	    r.stop ? JSON.stringify(r.stop.error) : 'never stopped');
	t.ok(r.used >= b && r.used < b + share + r.most,
	    `budget, two hosts: ${r.used} tokens of ${b}, overshoot under ` +
	    `one batch of shares (${share}) and one answer (${r.most})`,
	    r.used);
	const other = await outcome(chat(openai(need('KEY_BUDGET2'), {},
	    need('DEPOT_URL_B'))));
	t.ok(!other.ok && other.err.error?.code === 'insufficient_quota',
	    'budget, two hosts: the second host refuses too',
	    other.ok ? 'answered' : JSON.stringify(other.err.error));
}

// Tokens per minute: charged from the answers' usage.
async function tpm() {
	const limit = Number(need('TPM'));
	const c = openai(need('KEY_TPM'));
	let used = 0, most = 0, stop = null, last = null;
	for (let i = 0; i < 200; i++) {
		const r = await outcome(chat(c, 'one two three'));
		if (!r.ok) {
			stop = r;
			break;
		}
		const u = r.data.usage;
		used += u.prompt_tokens + u.completion_tokens;
		most = Math.max(most, u.prompt_tokens + u.completion_tokens);
		last = r.headers;
	}
	t.ok(header(last, 'x-ratelimit-limit-tokens') === String(limit),
	    'tokens per minute: x-ratelimit-limit-tokens on answers',
	    header(last, 'x-ratelimit-limit-tokens'));
	t.ok(stop && stop.err.status === 429 &&
	    stop.err.error?.type === 'tokens' &&
	    stop.err.error?.code === 'rate_limit_exceeded',
	    'tokens per minute: then a 429 of type "tokens"',
	    stop ? JSON.stringify(stop.err.error) : 'never stopped');
	t.ok(used >= limit && used < limit + most,
	    `tokens per minute: ${used} used of ${limit}, overshoot under ` +
	    `one answer (${most})`, used);
}

const parts = { openaiRate, anthropicRate, retries, budgetOne, budgetTwo,
    tpm };
if (!parts[part]) {
	console.log(`not ok - unknown part ${part}`);
	process.exit(1);
}
await parts[part]();
process.exit(failed() ? 1 : 0);
