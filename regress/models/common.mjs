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

// regress/models/common.mjs: what the model-route checks share: the
// upstream double (script, log, reset), what every upstream request
// must look like, and the checks that are the same in every dialect
// (routes, tool calls, faults, aborts, limits; file references are in
// refs.mjs).  Each dialect's script (chat.mjs, responses.mjs,
// messages.mjs) gives an adapter:
//
//	ask({model, content, bare, stream, tools, history, system, extra,
//	    signal, timeout, onEvent, key})
//		-> {text, calls: [{id, name, args}], stop, usage: {in, out},
//		raw}
//	parts: {text(s), file(id), image(id)} content parts in its shape
//	bare: optional {file(id), image(id)} bare input items (Responses)
//	followUp(content, answer, output) -> the history that sends
//		output back as the answer's tool call's result
//	api: the upstream api that speaks the caller's dialect, or null
//	passThrough: fields a same-dialect request must keep
//	tools, toolChoice: a get_weather tool and a choice of it
//	models: optional {client, isModel(m), shape}: the listing checks
//	mod: the SDK module (error classes)

import { randomBytes } from 'node:crypto';

import { loadSdk as load, need, objects, reporter } from
    '../harness/sdk.mjs';
import { reset, script, log } from '../upstream/lib.mjs';

export { objects };

export { failed } from '../harness/sdk.mjs';

export const env = {
	url: need('DEPOT_URL'),
	key: need('DEPOT_KEY'),
	otherKey: need('OTHER_KEY'),
	upstream: need('UPSTREAM_URL'),
	upstreamKey: process.env.UPSTREAM_KEY || 'test-upstream-key',
	big: process.env.MODELS_BIG === '1',
	modules: need('SDK_MODULES'),
};


// The configured models (suite.sh): which upstream path and name each
// must reach.
export const MODELS = {
	'm-chat': { path: '/v1/chat/completions', remote: 'remote/chat-model',
	    api: 'openai' },
	'm-anth': { path: '/v1/messages', remote: 'remote-anth-model',
	    api: 'anthropic' },
	'm-text': { path: '/v1/chat/completions', remote: 'remote/text',
	    api: 'openai' },
	'm-pdftext': { path: '/v1/chat/completions', remote: 'm-pdftext',
	    api: 'openai' },
	// Its upstream's port has no listener: a connection failure.
	'm-down': { path: '/v1/chat/completions', remote: 'm-down',
	    api: 'openai' },
};
export const NATIVE = ['m-chat', 'm-anth'];
const fileIdRe = /file-[0-9A-Za-z]{8,}/;

// The SDK under its install name, its reporter, and a client for a key
// (maxRetries 0: each check counts the upstream requests).
export function setup(alias, makeClient) {
	const sdk = load(env.modules, alias);
	const clientFor = (key) => makeClient(sdk.mod, key);
	return { mod: sdk.mod, t: reporter(`${sdk.name} ${sdk.version}`),
	    clientFor, client: clientFor(env.key) };
}

// The tool every dialect declares, and the schema of its input.
export const weatherSchema = { type: 'object',
    properties: { city: { type: 'string' } }, required: ['city'] };

// GET /v1/models and /v1/models/{id} through the SDK: the configured
// models, each in the dialect's shape (isModel).
export async function modelChecks(t, a) {
	const want = Object.keys(MODELS).sort();
	const { client, isModel } = a.models;
	await t.step('models.list() lists the configured models', async () => {
		const got = [];
		for await (const m of client.models.list())
			got.push(m);
		const ids = got.map((m) => m.id).sort();
		t.ok(got.every(isModel), `models.list(): ${a.models.shape} ` +
		    'model objects', JSON.stringify(got));
		return t.ok(JSON.stringify(ids) === JSON.stringify(want),
		    `models.list(): ${want.join(', ')}`, ids.join(', '));
	});
	await t.step('models.retrieve("m-chat")', async () => {
		const m = await client.models.retrieve('m-chat');
		return m.id === 'm-chat' && isModel(m);
	});
	await dbl.reset();
	await expectError(t, 'models.retrieve of an unknown model',
	    () => client.models.retrieve('no-such-model'),
	    a.mod.NotFoundError, 404);
}

export const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

// The double's control routes (regress/upstream/lib.mjs); the log
// holds only model requests.
export const dbl = {
	reset,
	script,
	log: async () => (await log()).filter((q) =>
	    q.path.startsWith('/v1/')),
};

export function rand() {
	return randomBytes(4).toString('hex');
}

// Every string in a JSON value, depth first.
export function strings(v, out = []) {
	if (typeof v === 'string')
		out.push(v);
	else if (Array.isArray(v))
		v.forEach((x) => strings(x, out));
	else if (v && typeof v === 'object')
		Object.values(v).forEach((x) => strings(x, out));
	return out;
}

// The base64 of data inside the body, bare or as a data: URL; the
// decoded bytes must equal data.  Returns the string that held it.
export function findInline(body, data) {
	const want = data.toString('base64');
	for (const s of strings(body)) {
		const b64 = s.startsWith('data:') ?
		    s.slice(s.indexOf(',') + 1) : s;
		if (b64.length !== want.length)
			continue;
		if (Buffer.compare(Buffer.from(b64, 'base64'), data) === 0)
			return s;
	}
	return null;
}

function headerLeak(req) {
	return Object.entries(req.headers).find(([, v]) =>
	    String(v).includes(env.key) || String(v).includes(env.otherKey));
}

// The upstream request went where the model says, with the upstream's
// key, and carried neither the caller's key nor any depotd file id.
export function checkUpstream(t, label, req, model) {
	const m = MODELS[model];
	const h = req ? req.headers : {};
	const auth = m.api === 'openai' ?
	    h.authorization === `Bearer ${env.upstreamKey}` :
	    h['x-api-key'] === env.upstreamKey &&
	    h['anthropic-version'] === '2023-06-01';
	t.ok(req && req.path.split('?')[0] === m.path && req.body &&
	    req.body.model === m.remote,
	    `${label}: upstream got POST ${m.path} for ${m.remote}`,
	    req ? `${req.path} model ${req.body?.model}` : 'no request');
	const raw = req ? JSON.stringify(req.body) : '';
	const leak = req ? headerLeak(req) : null;
	t.ok(req && auth && !leak && !raw.includes(env.key) &&
	    !fileIdRe.test(raw),
	    `${label}: upstream key only; no caller key, no file id`,
	    req ? `headers ${JSON.stringify(h)}; leak ${leak}; file id ` +
	    `${(raw.match(fileIdRe) || [])[0]}` : 'no request');
}

// The one upstream request of a check.
export async function onlyRequest(t, label) {
	const log = await dbl.log();
	t.ok(log.length === 1, `${label}: exactly one upstream request`,
	    `${log.length}: ${log.map((q) => q.path).join(' ')}`);
	return log[log.length - 1] || null;
}

// Runs each part of a script (only those MODELS_PARTS names, if set);
// an exception fails that part only.
export async function run(t, parts) {
	const only = process.env.MODELS_PARTS?.split(/[ ,]+/);
	for (const fn of parts) {
		if (only && !only.includes(fn.name))
			continue;
		try {
			await fn();
		} catch (e) {
			t.ok(false, `${fn.name} ran to its end`,
			    e && e.stack ? e.stack : e);
		}
	}
}

// fn must throw cls with status; returns the error or null.
export async function expectError(t, what, fn, cls, status) {
	let err = null;
	try {
		await fn();
	} catch (e) {
		err = e;
	}
	t.ok(err instanceof cls && err.status === status,
	    `${what}: ${cls.name} ${status}`,
	    err ? `${err.constructor.name} ${err.status}: ${err.message}` :
	    'no error');
	return err;
}

export function header(err, name) {
	const h = err?.headers;
	if (!h)
		return undefined;
	return typeof h.get === 'function' ? h.get(name) : h[name];
}

// The answer text, stop and usage of each configured route, plain and
// streamed; streamed also dripped a byte at a time (events split
// anywhere, UTF-8 sequences too) and with CRLF and comment lines.
export async function routeChecks(t, a) {
	const runs = [[false, null], [true, null],
	    [true, { kind: 'drip', ms: 1 }], [true, { kind: 'crlf' }]];
	for (const model of NATIVE) {
		for (const [stream, fault] of runs) {
			const label = `${a.route} ${model} ` +
			    (stream ? 'stream' : 'plain') +
			    (fault ? ` ${fault.kind}` : '');
			await t.step(`${label}: answered`, () =>
			    routeCheck(t, a, label, model, stream, fault));
		}
	}
}

async function routeCheck(t, a, label, model, stream, fault) {
	await dbl.reset();
	const msg = `hello ${label} ${rand()}` +
	    (fault ? ' caf\u00e9 \u2713 \u65e5\u672c \u{1f600}' : '');
	await dbl.script({ text: 'echo: {{last_user_text}}',
	    usage: { in: 11, out: 7 }, ...(fault ? { fault } : {}) });
	const r = await a.ask({ model, stream,
	    content: [a.parts.text(msg)] });
	t.ok(r.text === `echo: ${msg}` && r.stop === a.stopText,
	    `${label}: the answer arrives in the caller's dialect, ` +
	    `stop ${a.stopText}`, `"${r.text}" stop ${r.stop}`);
	t.ok(r.usage?.in === 11 && r.usage?.out === 7,
	    `${label}: usage 11 in, 7 out`, JSON.stringify(r.usage));
	const req = await onlyRequest(t, label);
	checkUpstream(t, label, req, model);
	if (model === 'm-anth' && a.route !== 'messages')
		t.ok(req?.body?.max_tokens === 1024,
		    `${label}: max_tokens is the model's max-tokens`,
		    req?.body?.max_tokens);
	return true;
}

// A bad depotd key: 401 in the dialect, nothing sent upstream.
export async function badKey(t, a) {
	await dbl.reset();
	await expectError(t, `${a.route} a bad depotd key`,
	    () => a.ask({ model: 'm-chat', stream: false,
	    key: 'dpt-' + 'ef'.repeat(20), content: [a.parts.text('x')] }),
	    a.mod.AuthenticationError, 401);
	t.ok((await dbl.log()).length === 0,
	    `${a.route} a bad depotd key: the upstream is not called`);
}

// The system prompt reaches either upstream in its own shape; sampling
// options cross; a same-dialect request keeps the fields it has.
export async function bridgeChecks(t, a) {
	for (const model of NATIVE) {
		const label = `${a.route} ${model} bridging`;
		await t.step(`${label}: answered`, () =>
		    bridgeCheck(t, a, label, model));
	}
}

async function bridgeCheck(t, a, label, model) {
	const sys = `Be brief ${rand()}.`;
	const same = MODELS[model].api === a.api;
	const keep = same ? a.passThrough : {};
	await dbl.reset();
	const r = await a.ask({ model, stream: false, system: sys,
	    extra: { temperature: 0.25, ...keep },
	    content: [a.parts.text('hi there')] });
	const q = await onlyRequest(t, label);
	const b = q?.body ?? {};
	const seen = JSON.stringify(b).slice(0, 500);
	const where = MODELS[model].api === 'openai' ?
	    (b.messages ?? []).filter((m) => m.role === 'system' ||
	    m.role === 'developer') : [b.system];
	t.ok(strings(where).some((x) => x.includes(sys)),
	    `${label}: the system prompt arrives in the upstream's shape`,
	    seen);
	t.ok(b.temperature === 0.25, `${label}: temperature carried over`,
	    b.temperature);
	if (same)
		t.ok(Object.entries(keep).every(([k, v]) =>
		    JSON.stringify(b[k]) === JSON.stringify(v)),
		    `${label}: same dialect: ${Object.keys(keep).join(', ')} ` +
		    'kept', seen);
	return r.text === 'echo: hi there';
}

const tools = 'get_weather';

// A tool call comes back in the caller's dialect, and the tool result
// sent back reaches the upstream and comes back in the answer.
export async function toolChecks(t, a) {
	for (const model of NATIVE) {
		for (const stream of [false, true]) {
			const label = `${a.route} ${model} ` +
			    (stream ? 'stream' : 'plain') + ' tool call';
			await t.step(`${label}: round trip`, async () => {
				await dbl.reset();
				await dbl.script({ tool_calls: [{ name: tools,
				    arguments: { city: 'Paris' } }] },
				    { text: 'weather: {{last_tool_result}}' });
				const content = [a.parts.text('weather?')];
				const r = await a.ask({ model, stream, content,
				    tools: a.tools,
				    extra: { tool_choice: a.toolChoice } });
				const c = r.calls[0];
				t.ok(r.calls.length === 1 && c.name === tools &&
				    c.args?.city === 'Paris' && c.id &&
				    r.stop === a.stopTool,
				    `${label}: the SDK sees the call in its ` +
				    `dialect, stop ${a.stopTool}`,
				    JSON.stringify(r.calls) + ' ' + r.stop);
				const history = a.followUp(content, r,
				    'sunny 21C');
				const r2 = await a.ask({ model, stream, history,
				    tools: a.tools });
				t.ok(r2.text === 'weather: sunny 21C',
				    `${label}: the tool result reaches the ` +
				    'upstream and the answer comes back',
				    `"${r2.text}"`);
				const log = await dbl.log();
				const first = log[0]?.body ?? {};
				return t.ok(log.length === 2 &&
				    log.every((q) => q.status === 200) &&
				    JSON.stringify(first.tools)
				    .includes(tools) &&
				    JSON.stringify(first.tool_choice)
				    ?.includes(tools),
				    `${label}: two upstream requests, the ` +
				    'tool declared and chosen in the first',
				    JSON.stringify(log.map((q) => q.status)) +
				    JSON.stringify(first.tool_choice));
			});
		}
	}
}

// Upstream faults, mapped into the caller's dialect.
export async function faultChecks(t, a) {
	const E = a.mod;
	const cases = [
		['400', { kind: 'status', status: 400,
		    message: 'upstream says: bad field "x"' },
		    E.BadRequestError, 400, /upstream says: bad field/],
		['404', { kind: 'status', status: 404,
		    message: 'no such remote model' }, E.BadRequestError, 400,
		    /no such remote model/],
		['413', { kind: 'status', status: 413,
		    message: 'prompt too long' }, E.BadRequestError, 400,
		    /prompt too long/],
		['422', { kind: 'status', status: 422,
		    message: 'unprocessable thing' }, E.BadRequestError, 400,
		    /unprocessable thing/],
		['401', { kind: 'status', status: 401, message: 'bad key' },
		    E.InternalServerError, 502],
		['403', { kind: 'status', status: 403, message: 'forbidden' },
		    E.InternalServerError, 502],
		['429', { kind: 'status', status: 429, message: 'slow down',
		    retry_after: '7' }, E.RateLimitError, 429],
		['500', { kind: 'status', status: 500, message: 'boom' },
		    E.InternalServerError, 502],
		['503', { kind: 'status', status: 503, message: 'busy' },
		    E.InternalServerError, 502],
		['garbage', { kind: 'garbage' }, E.InternalServerError, 502],
		['reset', { kind: 'reset', after: 'none' },
		    E.InternalServerError, 502],
		['stall', { kind: 'stall', after: 'headers' },
		    E.InternalServerError, 504],
	];
	for (const model of NATIVE) {
		for (const [name, fault, cls, status, msg] of cases) {
			const label = `${a.route} ${model} upstream ${name}`;
			await dbl.reset();
			await dbl.script({ fault });
			const t0 = Date.now();
			const err = await expectError(t, `${label} -> ` +
			    `${status}`, () => a.ask({ model, stream: false,
			    timeout: 15000, content: [a.parts.text('fault')] }),
			    cls, status);
			if (msg)
				t.ok(err && msg.test(err.message),
				    `${label}: the upstream's message is ` +
				    'passed on',
				    err?.message);
			if (name === '429')
				t.ok(header(err, 'retry-after') === '7',
				    `${label}: retry-after 7 passed on`,
				    header(err, 'retry-after'));
			if (name === 'stall')
				t.ok(Date.now() - t0 < 10000,
				    `${label}: 504 within idle-timeout + slack`,
				    `${Date.now() - t0} ms`);
		}
		await streamFaults(t, a, model);
	}
}

// An upstream nobody listens on: 502, plain and streamed.
export async function downCheck(t, a) {
	for (const stream of [false, true]) {
		const label = `${a.route} m-down ` +
		    (stream ? 'stream' : 'plain');
		await expectError(t, `${label}: a refused connection -> 502`,
		    () => a.ask({ model: 'm-down', stream, timeout: 15000,
		    content: [a.parts.text('anyone?')] }),
		    a.mod.InternalServerError, 502);
	}
}

// Streamed: a fault before the answer starts keeps its status (and
// message, and retry-after); one after must end the SDK's iteration
// with an error event, not a clean end.
async function streamFaults(t, a, model) {
	const cases = [
		['400', { kind: 'status', status: 400,
		    message: 'stream says no' }, 400],
		['429', { kind: 'status', status: 429, message: 'slow',
		    retry_after: '3' }, 429],
		['500', { kind: 'status', status: 500, message: 'x' }, 502],
		['garbage', { kind: 'garbage' }, 502],
		['reset after headers', { kind: 'reset', after: 'headers' },
		    502],
		['reset after first event', { kind: 'reset', after: 'first' },
		    502],
		['stall after first event', { kind: 'stall', after: 'first' },
		    504],
	];
	for (const [name, fault, status] of cases) {
		const label = `${a.route} ${model} stream upstream ${name}`;
		await dbl.reset();
		await dbl.script({ fault });
		const t0 = Date.now();
		const { err, r } = await a.ask({ model, stream: true,
		    timeout: 15000, content: [a.parts.text('stream fault')] })
		    .then((x) => ({ r: x }), (e) => ({ err: e }));
		const ms = Date.now() - t0;
		const got = err ? `${err.constructor.name} ${err.status}: ` +
		    `${err.message} after ${ms} ms` :
		    `no error: "${r?.text}" after ${ms} ms`;
		const early = fault.kind === 'status';
		// Before the status line: the status itself; after it, the
		// dialect's error event, which the SDK raises as APIError.
		t.ok(err instanceof a.mod.APIError &&
		    !(err instanceof a.mod.APIUserAbortError) &&
		    (err.status === status ||
		    (!early && err.status === undefined)) && ms < 10000,
		    `${label}: the SDK raises ` + (early ? `${status}` :
		    `${status} or an error event`) + ' within 10 s', got);
		if (name === '400')
			t.ok(/stream says no/.test(err?.message),
			    `${label}: the upstream's message is passed on`,
			    got);
		if (name === '429')
			t.ok(header(err, 'retry-after') === '3',
			    `${label}: retry-after 3 passed on`,
			    header(err, 'retry-after'));
	}
}

// A client that goes away mid-stream cancels the upstream call.
export async function abortCheck(t, a) {
	for (const model of NATIVE) {
		const label = `${a.route} ${model} client abort`;
		await t.step(`${label}: the upstream call is cancelled`,
		    async () => {
			await dbl.reset();
			// Dripped a byte per 10 ms: tens of seconds unless cut.
			await dbl.script({ text: 'drip '.repeat(600),
			    fault: { kind: 'drip' } });
			const ctl = new AbortController();
			let aborted = 0;
			const p = a.ask({ model, stream: true,
			    content: [a.parts.text('abort me')],
			    signal: ctl.signal, onEvent: () => {
				if (!aborted) {
					aborted = Date.now();
					ctl.abort();
				}
			    } }).catch((e) => e);
			const res = await Promise.race([p, sleep(15000)]);
			if (!aborted)
				throw new Error('no event within 15 s: ' +
				    (res?.message ?? res?.text));
			t.ok(res instanceof a.mod.APIUserAbortError,
			    `${label}: the SDK raises APIUserAbortError`,
			    res?.constructor?.name);
			let req = null;
			while (Date.now() - aborted < 3000) {
				req = (await dbl.log())[0];
				if (req?.client_closed)
					break;
				await sleep(50);
			}
			const ms = Date.now() - aborted;
			return t.ok(req?.client_closed === true && ms <= 1500,
			    `${label}: the double sees the close within ` +
			    '~1 s', `${JSON.stringify(req && { closed:
			    req.client_closed, ended: req.ended })} after ` +
			    `${ms} ms`);
		});
	}
}

// An unknown model: 404 in the dialect, nothing sent upstream.
export async function unknownModel(t, a) {
	await dbl.reset();
	const err = await expectError(t, `${a.route} unknown model`,
	    () => a.ask({ model: 'no-such-model', stream: false,
	    content: [a.parts.text('x')] }), a.mod.NotFoundError, 404);
	if (err)
		t.ok(a.notFoundCode(err), `${a.route} unknown model: ` +
		    'the dialect\'s not-found code', JSON.stringify(err.error));
	t.ok((await dbl.log()).length === 0,
	    `${a.route} unknown model: the upstream is not called`);
}

// JSON nested deeper than depotd's limit (64): 400, nothing sent.
export async function tooDeep(t, a) {
	await dbl.reset();
	let deep = 'bottom';
	for (let i = 0; i < 200; i++)
		deep = [deep];
	await expectError(t, `${a.route} JSON nested 200 deep`,
	    () => a.ask({ model: 'm-chat', stream: false,
	    extra: { x_deep: deep }, content: [a.parts.text('deep')] }),
	    a.mod.BadRequestError, 400);
	t.ok((await dbl.log()).length === 0,
	    `${a.route} JSON nested 200 deep: the upstream is not called`);
}

// A body over max-request-size (32M in suite.sh): 413.
export async function tooLarge(t, a) {
	await dbl.reset();
	const big = 'x'.repeat(33 * 1024 * 1024);
	let err = null;
	try {
		await a.ask({ model: 'm-chat', stream: false,
		    content: [a.parts.text(big)] });
	} catch (e) {
		err = e;
	}
	t.ok(err instanceof a.mod.APIError && err.status === 413,
	    `${a.route} body over max-request-size: 413`,
	    err ? `${err.constructor.name} ${err.status} ${err.message}` :
	    'no error');
	t.ok((await dbl.log()).length === 0,
	    `${a.route} body over max-request-size: the upstream is not ` +
	    'called');
}
