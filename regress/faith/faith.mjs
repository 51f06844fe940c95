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

// regress/faith/faith.mjs ALIAS: issue 23's faithfulness checks through
// one official SDK (openai 7 or 6: chat completions and Responses;
// @anthropic-ai/sdk 1 or 0: Messages) against depotd, whose three
// upstreams (api openai, api openai with responses, api anthropic)
// are the double playing llama-server (double_llama.py):
//   - a streamed answer's usage equals the plain answer's, field for
//     field, cached-token split included, on every route and upstream;
//   - a chat stream has a usage chunk only when the caller asked
//     (stream_options.include_usage), and then exactly one;
//   - a stop sequence the upstream names comes as stop_sequence (chat:
//     finish_reason "stop"; Responses: completed);
//   - ids in the caller's dialect: msg_, chatcmpl-, resp_.

import { isDeepStrictEqual } from 'node:util';

import { loadSdk, need, reporter, failed } from '../harness/sdk.mjs';

const alias = process.argv[2];
const url = need('DEPOT_URL');
const key = need('DEPOT_KEY');
const upstream = need('UPSTREAM_URL');
const sdk = loadSdk(need('SDK_MODULES'), alias);
const t = reporter(`${sdk.name} ${sdk.version}`);
const anthropic = sdk.name === '@anthropic-ai/sdk';
const MODELS = ['m-chat', 'm-resp', 'm-anth'];
const USAGE = { in: 20, out: 5, cached: 8 };
const TEXT = 'Hello there, from llama';

async function script(...turns) {
	for (const route of ['/__reset', '/__script']) {
		const r = await fetch(upstream + route, { method: 'POST',
		    body: JSON.stringify({ turns }) });
		if (r.status !== 204)
			throw new Error(`${route}: ${r.status}`);
	}
}

const turn = (extra) => ({ server: 'llama', text: TEXT, usage: USAGE,
    ...extra });
const show = (v) => JSON.stringify(v);
const messages = [{ role: 'user', content: 'Say hello' }];

function client() {
	const C = sdk.mod.OpenAI ?? sdk.mod.Anthropic ?? sdk.mod.default;
	return new C({ baseURL: anthropic ? url : url + '/v1', apiKey: key,
	    maxRetries: 0, timeout: 60000 });
}
const c = client();

// --- chat completions --------------------------------------------

async function chatStream(model, extra, stop) {
	await script(turn(stop));
	const chunks = [];
	const s = await c.chat.completions.create({ model, messages,
	    stream: true, ...extra });
	for await (const ch of s)
		chunks.push(ch);
	return chunks;
}

async function chatChecks(model) {
	const w = `chat on ${model}`;
	await script(turn());
	const plain = await c.chat.completions.create({ model, messages });
	t.ok(plain.usage?.prompt_tokens === 20 &&
	    plain.usage?.prompt_tokens_details?.cached_tokens === 8,
	    `${w}: plain usage has the cached split`, show(plain.usage));
	t.ok(/^chatcmpl-/.test(plain.id), `${w}: plain id chatcmpl-`,
	    plain.id);

	let chunks = await chatStream(model, { stream_options:
	    { include_usage: true } });
	const usage = chunks.filter((ch) => ch.choices.length === 0);
	t.ok(usage.length === 1, `${w}: include_usage asked, exactly one ` +
	    'usage chunk', show(usage));
	t.ok(isDeepStrictEqual(usage[0]?.usage, plain.usage),
	    `${w}: streamed usage equals the plain answer's, field for ` +
	    'field', `${show(usage[0]?.usage)} != ${show(plain.usage)}`);
	t.ok(chunks.every((ch) => /^chatcmpl-/.test(ch.id) &&
	    ch.id === chunks[0].id), `${w}: one chatcmpl- id in every chunk`,
	    show(chunks.map((ch) => ch.id)));

	chunks = await chatStream(model, {});
	const bare = chunks.filter((ch) => ch.choices.length === 0 ||
	    'usage' in ch);
	t.ok(bare.length === 0 && chunks.length > 0, `${w}: not asked, no ` +
	    'usage chunk and no usage field', show(bare));
	// What client code that reads choices[0] unguarded does.
	let text = '';
	try {
		for (const ch of chunks)
			text += ch.choices[0].delta.content ?? '';
		t.ok(text === TEXT, `${w}: choices[0] read unguarded gives ` +
		    'the text', text);
	} catch (e) {
		t.ok(false, `${w}: choices[0] read unguarded`, String(e));
	}
	chunks = await chatStream(model, { stream_options:
	    { include_usage: false } });
	t.ok(!chunks.some((ch) => ch.choices.length === 0),
	    `${w}: include_usage false, no usage chunk`);

	if (model !== 'm-anth')
		return;
	await script(turn({ stop: 'egr' }));
	const p = await c.chat.completions.create({ model, messages,
	    stop: ['egr'] });
	chunks = await chatStream(model, { stop: ['egr'] }, { stop: 'egr' });
	const fin = chunks.map((ch) => ch.choices[0]?.finish_reason)
	    .filter(Boolean);
	t.ok(p.choices[0].finish_reason === 'stop' &&
	    show(fin) === '["stop"]', `${w}: a named stop sequence is ` +
	    'finish_reason "stop", plain and streamed', show([p.choices, fin]));
}

// --- Responses -----------------------------------------------------

async function responsesChecks(model) {
	const w = `responses on ${model}`;
	await script(turn());
	const plain = await c.responses.create({ model, input: 'Say hello' });
	t.ok(plain.usage?.input_tokens === 20 &&
	    plain.usage?.input_tokens_details?.cached_tokens === 8,
	    `${w}: plain usage has the cached split`, show(plain.usage));
	t.ok(/^resp_/.test(plain.id), `${w}: plain id resp_`, plain.id);
	await script(turn());
	const s = c.responses.stream({ model, input: 'Say hello' });
	const ids = new Set();
	for await (const ev of s)
		if (ev.response)
			ids.add(ev.response.id);
	const fin = await s.finalResponse();
	t.ok(isDeepStrictEqual(fin.usage, plain.usage), `${w}: streamed ` +
	    'usage equals the plain answer\'s, field for field',
	    `${show(fin.usage)} != ${show(plain.usage)}`);
	t.ok(ids.size === 1 && /^resp_/.test([...ids][0]) &&
	    fin.id === [...ids][0], `${w}: one resp_ id in the stream`,
	    show([...ids]));
	if (model !== 'm-anth')
		return;
	await script(turn({ stop: 'egr' }), turn({ stop: 'egr' }));
	const p = await c.responses.create({ model, input: 'Say hello' });
	const f = await c.responses.stream({ model, input: 'Say hello' })
	    .finalResponse();
	t.ok(p.status === 'completed' && f.status === 'completed',
	    `${w}: a named stop sequence completes, plain and streamed`,
	    show([p.status, f.status]));
}

// --- Messages ------------------------------------------------------

async function messagesChecks(model) {
	const w = `messages on ${model}`;
	const req = { model, max_tokens: 64, messages };
	await script(turn());
	const plain = await c.messages.create(req);
	t.ok(plain.usage?.cache_read_input_tokens === 8 &&
	    plain.usage?.input_tokens === 12, `${w}: plain usage has the ` +
	    'cached split', show(plain.usage));
	t.ok(/^msg_/.test(plain.id), `${w}: plain id msg_`, plain.id);
	await script(turn());
	const s = c.messages.stream(req);
	const fin = await s.finalMessage();
	t.ok(isDeepStrictEqual(fin.usage, plain.usage), `${w}: streamed ` +
	    'usage equals the plain answer\'s, field for field',
	    `${show(fin.usage)} != ${show(plain.usage)}`);
	t.ok(/^msg_/.test(fin.id), `${w}: streamed id msg_`, fin.id);
	if (model !== 'm-anth')
		return;
	const stopReq = { ...req, stop_sequences: ['egr'] };
	await script(turn({ stop: 'egr' }), turn({ stop: 'egr' }));
	const p = await c.messages.create(stopReq);
	const f = await c.messages.stream(stopReq).finalMessage();
	t.ok(p.stop_reason === 'stop_sequence' && p.stop_sequence === 'egr',
	    `${w}: plain: stop_reason "stop_sequence", stop_sequence "egr"`,
	    show([p.stop_reason, p.stop_sequence]));
	t.ok(f.stop_reason === 'stop_sequence' && f.stop_sequence === 'egr',
	    `${w}: streamed: stop_reason "stop_sequence", stop_sequence "egr"`,
	    show([f.stop_reason, f.stop_sequence]));
}

for (const model of MODELS) {
	const checks = anthropic ? [messagesChecks] :
	    [chatChecks, responsesChecks];
	for (const fn of checks)
		await t.step(`${fn.name} ${model} ran`, () => fn(model));
}
process.exit(failed() ? 1 : 0);
