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

// regress/upstream/openai.mjs ALIAS: the OpenAI SDK installed as ALIAS
// ("openai", "openai6") straight against the upstream double: chat
// completions and Responses, plain and streamed, tool calls, faults,
// validation and the request log.  The SDK is the judge of the
// double's wire format.

import { url, key, loadSdk, reporter, done, script, reset, lastLogged,
    expectThrow, faults, isolated } from './lib.mjs';

const alias = process.argv[2] || 'openai';
const sdk = loadSdk(alias);
const OpenAI = sdk.mod.OpenAI ?? sdk.mod.default;
const t = reporter(`${sdk.name} ${sdk.version}`);
const step = isolated(t);
const client = new OpenAI({ baseURL: url + '/v1', apiKey: key,
    maxRetries: 0 });
const model = 'gpt-test';
const hi = [{ role: 'user', content: 'hi there' }];
const tools = [{ type: 'function', function: { name: 'lookup',
    description: 'look a thing up', parameters: { type: 'object',
    properties: { q: { type: 'string' } } } } }];
const rtools = [{ type: 'function', name: 'lookup',
    description: 'look a thing up', parameters: { type: 'object',
    properties: { q: { type: 'string' } } } }];

async function chatText(opts) {
	const r = await client.chat.completions.create({ model,
	    messages: hi }, opts);
	return r.choices[0].message.content;
}

async function chatStreamText(opts) {
	const s = await client.chat.completions.create({ model, messages: hi,
	    stream: true }, opts);
	let text = '';
	for await (const c of s)
		text += c.choices[0]?.delta?.content ?? '';
	return text;
}

async function respText(opts) {
	const r = await client.responses.create({ model, input: 'hi there' },
	    opts);
	return r.output_text;
}

async function respStreamText(opts) {
	const s = await client.responses.create({ model, input: 'hi there',
	    stream: true }, opts);
	let text = '';
	for await (const e of s) {
		if (e.type === 'response.output_text.delta')
			text += e.delta;
		// openai 6 hands an error event on as an event, 7 throws.
		if (e.type === 'error')
			throw new Error(`error event: ${e.message}`);
	}
	return text;
}

async function chatPlain() {
	await step('chat: plain answer has the chat.completion shape',
	    async () => {
		await script({ text: 'hello world', usage: { in: 3, out: 2 } });
		const r = await client.chat.completions.create({ model,
		    messages: hi });
		const c = r.choices[0];
		return t.ok(/^chatcmpl-/.test(r.id) &&
		    r.object === 'chat.completion' && r.model === model &&
		    Number.isInteger(r.created) && c.index === 0 &&
		    c.message.role === 'assistant' &&
		    c.message.content === 'hello world' &&
		    c.finish_reason === 'stop' && c.logprobs === null &&
		    r.usage.prompt_tokens === 3 &&
		    r.usage.completion_tokens === 2 &&
		    r.usage.total_tokens === 5, 'chat: plain fields',
		    JSON.stringify(r));
	});
	await step('chat: no turn queued echoes the user text', async () =>
	    t.ok(await chatText() === 'echo: hi there', 'chat: echo'));
}

async function chatStream() {
	await step('chat: stream with include_usage', async () => {
		await script({ text: 'héllo wörld ✓' });
		const s = await client.chat.completions.create({ model,
		    messages: hi, stream: true,
		    stream_options: { include_usage: true } });
		const chunks = [];
		for await (const c of s)
			chunks.push(c);
		const text = chunks.map((c) => c.choices[0]?.delta?.content ??
		    '').join('');
		const last = chunks[chunks.length - 1];
		const fin = chunks[chunks.length - 2];
		return t.ok(text === 'héllo wörld ✓' &&
		    chunks[0].choices[0].delta.role === 'assistant' &&
		    chunks.every((c) => c.object === 'chat.completion.chunk' &&
		    c.id === chunks[0].id) &&
		    fin.choices[0].finish_reason === 'stop' &&
		    last.choices.length === 0 && last.usage.total_tokens > 0,
		    'chat: stream chunks, finish_reason, usage chunk',
		    JSON.stringify(chunks));
	});
}

async function chatTools() {
	await step('chat: a tool call, then its result echoed', async () => {
		await script({ tool_calls: [{ name: 'lookup',
		    arguments: { q: 'apples' } }] },
		    { text: 'result: {{last_tool_result}}' });
		const r1 = await client.chat.completions.create({ model,
		    messages: hi, tools });
		const m = r1.choices[0].message;
		const call = m.tool_calls?.[0];
		t.ok(r1.choices[0].finish_reason === 'tool_calls' &&
		    m.content === null && /^call_/.test(call?.id) &&
		    call.type === 'function' &&
		    call.function.name === 'lookup' &&
		    JSON.parse(call.function.arguments).q === 'apples',
		    'chat: tool_calls message', JSON.stringify(r1));
		const r2 = await client.chat.completions.create({ model, tools,
		    messages: [...hi, m, { role: 'tool', tool_call_id: call.id,
		    content: '42 apples' }] });
		return t.ok(r2.choices[0].message.content ===
		    'result: 42 apples', 'chat: {{last_tool_result}}',
		    JSON.stringify(r2));
	});
	await step('chat: streamed tool call through stream() helper',
	    async () => {
		await script({ tool_calls: [{ id: 'call_fixed1', name: 'lookup',
		    arguments: { q: 'pé 😀' } }] });
		const s = client.chat.completions.stream({ model, messages: hi,
		    tools });
		const r = await s.finalChatCompletion();
		const call = r.choices[0].message.tool_calls[0];
		return t.ok(call.id === 'call_fixed1' &&
		    call.function.name === 'lookup' &&
		    JSON.parse(call.function.arguments).q === 'pé 😀' &&
		    r.choices[0].finish_reason === 'tool_calls',
		    'chat: accumulated tool call', JSON.stringify(r));
	});
}

async function respPlain() {
	await step('responses: plain answer has the response shape',
	    async () => {
		await script({ text: 'hello there' });
		const r = await client.responses.create({ model,
		    input: 'hi there' });
		const item = r.output[0];
		return t.ok(/^resp_/.test(r.id) && r.object === 'response' &&
		    r.status === 'completed' && r.model === model &&
		    Number.isInteger(r.created_at) &&
		    r.output_text === 'hello there' &&
		    item.type === 'message' && /^msg_/.test(item.id) &&
		    item.role === 'assistant' &&
		    item.content[0].type === 'output_text' &&
		    Array.isArray(item.content[0].annotations) &&
		    r.usage.total_tokens === r.usage.input_tokens +
		    r.usage.output_tokens, 'responses: plain fields',
		    JSON.stringify(r));
	});
}

async function respStream() {
	await step('responses: stream events in order', async () => {
		await script({ text: 'one two three' });
		const s = await client.responses.create({ model,
		    input: 'hi there', stream: true });
		const ev = [];
		for await (const e of s)
			ev.push(e);
		const types = [...new Set(ev.map((e) => e.type))];
		const want = ['response.created', 'response.in_progress',
		    'response.output_item.added', 'response.content_part.added',
		    'response.output_text.delta', 'response.output_text.done',
		    'response.content_part.done', 'response.output_item.done',
		    'response.completed'];
		return t.ok(JSON.stringify(types) === JSON.stringify(want) &&
		    ev.every((e, i) => e.sequence_number === i) &&
		    ev[ev.length - 1].response.output[0].content[0].text ===
		    'one two three',
		    'responses: event types and sequence numbers',
		    JSON.stringify(types));
	});
	await step('responses: stream() and finalResponse()', async () => {
		await script({ text: 'final answer' });
		const s = client.responses.stream({ model, input: 'hi there' });
		let deltas = '';
		s.on('response.output_text.delta', (e) => {
			deltas += e.delta;
		});
		const r = await s.finalResponse();
		return t.ok(r.output_text === 'final answer' &&
		    deltas === 'final answer', 'responses: final response',
		    JSON.stringify(r));
	});
}

async function respTools() {
	await step('responses: text and a function call streamed, then ' +
	    'its output echoed', async () => {
		await script({ text: 'let me look', tool_calls: [{
		    name: 'lookup', arguments: { q: 'pears' } }] },
		    { text: 'got {{last_tool_result}}' });
		const s = client.responses.stream({ model, input: 'hi there',
		    tools: rtools });
		const r = await s.finalResponse();
		const call = r.output.find((o) => o.type === 'function_call');
		t.ok(r.output.length === 2 && r.output[0].type === 'message' &&
		    r.output_text === 'let me look' && /^fc_/.test(call?.id) &&
		    /^call_/.test(call.call_id) && call.name === 'lookup' &&
		    JSON.parse(call.arguments).q === 'pears' &&
		    call.status === 'completed',
		    'responses: function_call item',
		    JSON.stringify(r));
		const r2 = await client.responses.create({ model, tools: rtools,
		    input: [{ role: 'user', content: 'hi there' }, call,
		    { type: 'function_call_output', call_id: call.call_id,
		    output: '7 pears' }] });
		return t.ok(r2.output_text === 'got 7 pears',
		    'responses: {{last_tool_result}}', JSON.stringify(r2));
	});
	await step('responses: function_call_output after ' +
	    'previous_response_id', async () => {
		await script({ tool_calls: [{ name: 'lookup',
		    arguments: {} }] }, { text: '{{last_tool_result}}!' });
		const r = await client.responses.create({ model,
		    input: 'hi there', tools: rtools });
		const call = r.output[0];
		const r2 = await client.responses.create({ model,
		    previous_response_id: r.id, input: [{
		    type: 'function_call_output', call_id: call.call_id,
		    output: 'done' }] });
		return t.ok(r.output.length === 1 &&
		    call.type === 'function_call' && r2.output_text === 'done!',
		    'responses: previous_response_id call', JSON.stringify(r2));
	});
}

async function validation() {
	const E = sdk.mod;
	const bad = [
	    ['chat: tool result without a call', () =>
		client.chat.completions.create({ model, messages: [...hi,
		{ role: 'tool', tool_call_id: 'call_nope', content: 'x' }] })],
	    ['chat: unknown content part', () =>
		client.chat.completions.create({ model, messages: [{
		role: 'user', content: [{ type: 'video', video: 'x' }] }] })],
	    ['chat: malformed data: URL', () =>
		client.chat.completions.create({ model, messages: [{
		role: 'user', content: [{ type: 'image_url', image_url: {
		url: 'data:image/png;base64,@@not base64@@' } }] }] })],
	    ['chat: unknown role', () => client.chat.completions.create({
		model, messages: [{ role: 'robot', content: 'x' }] })],
	    ['chat: no model', () => client.chat.completions.create({
		messages: hi })],
	    ['responses: output without a call', () =>
		client.responses.create({ model, input: [{
		type: 'function_call_output', call_id: 'call_nope',
		output: 'x' }] })],
	    ['responses: bad file_data', () => client.responses.create({
		model, input: [{ role: 'user', content: [{
		type: 'input_file', filename: 'a.pdf',
		file_data: 'data:application/pdf;base64,%%%' }] }] })],
	    ['responses: no input', () => client.responses.create({ model })],
	    ['chat: a tool call left unanswered', () =>
		client.chat.completions.create({ model, messages: [...hi,
		{ role: 'assistant', content: null, tool_calls: [{
		id: 'call_a', type: 'function', function: { name: 'lookup',
		arguments: '{}' } }] }, { role: 'user', content: 'and?' }] })],
	    ['chat: a tool name with a space', () =>
		client.chat.completions.create({ model, messages: hi,
		tools: [{ type: 'function',
		function: { name: 'look up' } }] })],
	    ['responses: a function call without its output', () =>
		client.responses.create({ model, input: [{
		type: 'function_call', call_id: 'call_a', name: 'lookup',
		arguments: '{}' }] })],
	];
	for (const [what, fn] of bad) {
		const err = await expectThrow(t, what, fn, E.BadRequestError,
		    400);
		t.ok(typeof err?.error?.message === 'string' &&
		    err.error.type === 'invalid_request_error',
		    `${what}: OpenAI error envelope`,
		    JSON.stringify(err?.error));
	}
	const wrong = new OpenAI({ baseURL: url + '/v1',
	    apiKey: 'sk-wrong-1234', maxRetries: 0 });
	await expectThrow(t, 'chat: a wrong key', () =>
	    wrong.chat.completions.create({ model, messages: hi }),
	    E.AuthenticationError, 401);
}

async function logged() {
	await step('log: path, headers and body of a request', async () => {
		await client.chat.completions.create({ model, messages: hi,
		    metadata: { probe: 'log-1' } });
		const e = await lastLogged();
		return t.ok(e.path === '/v1/chat/completions' &&
		    e.headers.authorization === `Bearer ${key}` &&
		    e.headers['content-type'] === 'application/json' &&
		    e.body.metadata.probe === 'log-1' &&
		    /^[0-9a-f]{64}$/.test(e.raw_sha256) && e.status === 200 &&
		    e.client_closed === false && e.ended >= e.started,
		    'log: entry fields', JSON.stringify(e));
	});
	await step('models: list', async () => {
		const ids = [];
		for await (const m of client.models.list())
			ids.push(m.id);
		return ids.includes('gpt-test');
	});
}

await reset();
await chatPlain();
await chatStream();
await chatTools();
await respPlain();
await respStream();
await respTools();
await validation();
await logged();
await t.step('chat: the fault checks ran to the end', () =>
    faults(t, sdk, chatText, chatStreamText, 'chat'));
await t.step('responses: the fault checks ran to the end', () =>
    faults(t, sdk, respText, respStreamText, 'responses'));
done();
