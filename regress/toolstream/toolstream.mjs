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

// regress/toolstream/toolstream.mjs ALIAS: the SDK installed as ALIAS
// (openai, openai6: responses; @anthropic-ai/sdk, anthropic0: messages)
// asking depotd for code execution against both upstream apis: the
// words the model wrote before its code_execution call come back
// before the run, as the providers answer (a text block before the
// server_tool_use; a message item before the code_interpreter_call),
// plain and through the SDK's stream helper; a caller's `container'
// never reaches the upstream; and a streamed request's first words
// arrive before the next round is answered (the double thinks
// THINK_MS over it).

import { need, objects, loadSdk, reporter, failed } from
    '../harness/sdk.mjs';
import { reset, script, log } from '../upstream/lib.mjs';

const THINK_MS = 2500;
const env = { url: need('DEPOT_URL'), key: need('DEPOT_KEY'),
    modules: need('SDK_MODULES') };
const alias = process.argv[2] || 'openai';
const { mod, name, version } = loadSdk(env.modules, alias);
const t = reporter(`${name} ${version}`);
const anthropic = name.includes('anthropic');
const MODELS = ['m-chat', 'm-anth'];
const BETAS = ['files-api-2025-04-14'];

let client;
if (anthropic) {
	const Anthropic = mod.Anthropic ?? mod.default;
	client = new Anthropic({ baseURL: env.url, apiKey: env.key,
	    maxRetries: 0, timeout: 60000 });
} else {
	const OpenAI = mod.OpenAI ?? mod.default;
	client = new OpenAI({ baseURL: env.url + '/v1', apiKey: env.key,
	    maxRetries: 0, timeout: 60000 });
}

const modelLog = async () => (await log()).filter((q) =>
    q.path.startsWith('/v1/'));

// The route's dialect: the native tool, what an answer holds.
const dialect = anthropic ? {
	native: { type: 'code_execution_20250825', name: 'code_execution' },
	gateway: { type: 'otari_code_execution' },
	async ask(model, tools, text, stream, extra = {}) {
		const body = { model, max_tokens: 256, tools, betas: BETAS,
		    messages: [{ role: 'user', content: text }], ...extra };
		if (!stream)
			return { m: await client.beta.messages.create(body) };
		return streamed(client.beta.messages.stream(body),
		    (s) => s.finalMessage());
	},
	// [type, text] of each block
	blocks: (m) => (m.content ?? []).map((b) => [b.type, b.text ?? '']),
	textType: 'text',
	runType: 'server_tool_use',
} : {
	native: { type: 'code_interpreter', container: { type: 'auto' } },
	gateway: { type: 'otari_code_execution' },
	async ask(model, tools, text, stream, extra = {}) {
		const body = { model, tools, input: [{ role: 'user',
		    content: [{ type: 'input_text', text }] }], ...extra };
		if (!stream)
			return { m: await client.responses.create(body) };
		return streamed(client.responses.stream(body),
		    (s) => s.finalResponse());
	},
	blocks: (m) => (m.output ?? []).map((o) => [o.type,
	    (o.content ?? []).map((c) => c.text ?? '').join('')]),
	textType: 'message',
	runType: 'code_interpreter_call',
};

// Every event with the milliseconds since the request, and the end.
async function streamed(s, final) {
	const t0 = Date.now();
	const events = [];
	for await (const ev of s)
		events.push({ ms: Date.now() - t0, ev });
	const m = await final(s);
	return { m, events, total: Date.now() - t0 };
}

function script2(pre, post, think) {
	const code = `print(6 * ${pre.length})`;
	return script({ text: pre, tool_calls: [{ name: 'code_execution',
	    arguments: { code } }] }, { text: post,
	    ...(think ? { think_ms: THINK_MS } : {}) });
}

// The model's words before its call, kept before the run.
async function textKept(model, stream, native) {
	const label = `${model} ${stream ? 'stream' : 'plain'} ` +
	    `${native ? 'native' : 'gateway'} tool`;
	const pre = `Let me compute that ${Math.random().toString(36)
	    .slice(2, 8)}.`;
	const post = 'The answer is 42.';
	await reset();
	await script2(pre, post, false);
	const r = await dialect.ask(model, [native ? dialect.native :
	    dialect.gateway], 'What is six times something?', stream);
	const b = dialect.blocks(r.m);
	const iPre = b.findIndex(([ty, tx]) => ty === dialect.textType &&
	    tx === pre);
	const iRun = b.findIndex(([ty]) => ty === dialect.runType);
	const iPost = b.findIndex(([ty, tx]) => ty === dialect.textType &&
	    tx.includes(post));
	t.ok(iPre >= 0 && iPost > iPre && (native ? iRun > iPre &&
	    iPost > iRun : iRun === -1), `${label}: the text before the ` +
	    `call kept as a ${dialect.textType} ahead of ` +
	    (native ? 'the run and ' : '') + 'the answer',
	    JSON.stringify(b));
	if (stream && anthropic)
		t.ok(r.events.some(({ ev }) => ev.type ===
		    'content_block_delta' && ev.delta?.type === 'text_delta' &&
		    ev.delta.text === pre), `${label}: the stream tells that ` +
		    'text as a text_delta (the SDK\'s text events see it)',
		    JSON.stringify(r.events.slice(0, 6)));
	if (stream && !anthropic)
		t.ok(r.events.some(({ ev }) => ev.type ===
		    'response.output_text.delta' && ev.delta === pre),
		    `${label}: the stream tells that text as an ` +
		    'output_text.delta (the SDK\'s text events see it)',
		    JSON.stringify(r.events.slice(0, 8)));
}

// A streamed answer's first words arrive while round 2 is thought.
async function firstWords(model) {
	const label = `${model} stream native tool`;
	const pre = 'Let me look at the data first.';
	await reset();
	await script2(pre, 'Done.', true);
	const r = await dialect.ask(model, [dialect.native],
	    'Look at it.', true);
	const first = r.events.find((e) => JSON.stringify(e.ev)
	    .includes('Let me look'));
	t.ok(first && r.total >= THINK_MS && first.ms < r.total -
	    THINK_MS / 2, `${label}: the first words reach the SDK before ` +
	    `the next round is answered (${first?.ms} ms of ${r.total} ms; ` +
	    `the upstream thought ${THINK_MS} ms over it)`,
	    JSON.stringify(r.events.slice(0, 6)));
	const lg = await modelLog();
	t.ok(lg.length === 2, `${label}: two upstream requests`,
	    lg.length);
}

// A caller's container is depotd's business, never the upstream's.
async function noContainer(model) {
	const label = `${model} container`;
	const id = anthropic ? 'container_011CTEST' : 'cntr_test0123';
	await reset();
	await script({ text: 'fine' });
	let err;
	try {
		if (anthropic)
			await dialect.ask(model, [], 'hi', false,
			    { container: id });
		else
			await dialect.ask(model, [{ type: 'code_interpreter',
			    container: id }], 'hi', false);
	} catch (e) {
		err = e;
	}
	const lg = await modelLog();
	const seen = lg.some((q) => JSON.stringify(q.body).includes(id) ||
	    objects(q.body ?? {}, (o) => 'container' in o).length > 0);
	t.ok(!seen && (err === undefined || err.status === 404),
	    `${label}: the caller's container never reaches the upstream` +
	    (err ? ` (refused: ${err.status})` : ''),
	    err ? err.message : JSON.stringify(lg.map((q) => q.body)));
}

const only = process.env.TOOLSTREAM_PARTS?.split(',');
const parts = [];
for (const model of MODELS) {
	for (const stream of [false, true])
		for (const native of [true, false])
			parts.push([`${model} ${stream} ${native} text`,
			    () => textKept(model, stream, native)]);
	parts.push([`${model} first words`, () => firstWords(model)]);
	parts.push([`${model} container`, () => noContainer(model)]);
}
for (const [n, fn] of parts) {
	if (only && !only.some((o) => n.includes(o)))
		continue;
	try {
		await fn();
	} catch (e) {
		t.ok(false, `${n} ran to its end`, e?.stack ?? e);
	}
}
process.exit(failed() ? 1 : 0);
