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

// regress/upstream/anthropic.mjs ALIAS: the Anthropic SDK installed as
// ALIAS ("@anthropic-ai/sdk", "anthropic0") straight against the
// upstream double: Messages plain and streamed, stream() with
// finalMessage(), tool use, faults, validation and the request log.

import { url, key, loadSdk, reporter, done, script, reset, lastLogged,
    expectThrow, faults, isolated } from './lib.mjs';

const alias = process.argv[2] || '@anthropic-ai/sdk';
const sdk = loadSdk(alias);
const Anthropic = sdk.mod.Anthropic ?? sdk.mod.default;
const t = reporter(`${sdk.name} ${sdk.version}`);
const step = isolated(t);
const client = new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 });
const model = 'claude-test';
const hi = [{ role: 'user', content: 'hi there' }];
const base = { model, max_tokens: 64, messages: hi };
const tools = [{ name: 'lookup', description: 'look a thing up',
    input_schema: { type: 'object', properties: { q: { type: 'string' } } } }];

const textOf = (m) => m.content.filter((b) => b.type === 'text')
    .map((b) => b.text).join('');

async function plainText(opts) {
	return textOf(await client.messages.create(base, opts));
}

async function streamText(opts) {
	const s = await client.messages.create({ ...base, stream: true }, opts);
	let text = '';
	for await (const e of s)
		if (e.type === 'content_block_delta' &&
		    e.delta.type === 'text_delta')
			text += e.delta.text;
	return text;
}

async function plain() {
	await step('messages: plain answer has the message shape',
	    async () => {
		await script({ text: 'hello world', usage: { in: 4, out: 2 } });
		const m = await client.messages.create(base);
		return t.ok(/^msg_/.test(m.id) && m.type === 'message' &&
		    m.role === 'assistant' && m.model === model &&
		    m.content.length === 1 && m.content[0].type === 'text' &&
		    m.content[0].text === 'hello world' &&
		    m.stop_reason === 'end_turn' && m.stop_sequence === null &&
		    m.usage.input_tokens === 4 && m.usage.output_tokens === 2,
		    'messages: plain fields', JSON.stringify(m));
	});
	await step('messages: no turn queued echoes the user text',
	    async () => t.ok(await plainText() === 'echo: hi there',
	    'messages: echo'));
}

async function streamed() {
	await step('messages: stream events in order', async () => {
		await script({ text: 'héllo wörld ✓',
		    usage: { in: 5, out: 3 } });
		const s = await client.messages.create({ ...base,
		    stream: true });
		const ev = [];
		for await (const e of s)
			ev.push(e);
		const types = [...new Set(ev.map((e) => e.type))];
		const want = ['message_start', 'content_block_start',
		    'content_block_delta', 'content_block_stop',
		    'message_delta', 'message_stop'];
		const text = ev.filter((e) => e.type === 'content_block_delta')
		    .map((e) => e.delta.text).join('');
		const md = ev.find((e) => e.type === 'message_delta');
		return t.ok(JSON.stringify(types) === JSON.stringify(want) &&
		    text === 'héllo wörld ✓' &&
		    ev[0].message.usage.input_tokens === 5 &&
		    md.delta.stop_reason === 'end_turn' &&
		    md.usage.output_tokens === 3, 'messages: stream events',
		    JSON.stringify(types));
	});
	await step('messages: stream() and finalMessage()', async () => {
		await script({ text: 'final answer' });
		const s = client.messages.stream(base);
		let deltas = '';
		s.on('text', (d) => {
			deltas += d;
		});
		const m = await s.finalMessage();
		return t.ok(textOf(m) === 'final answer' &&
		    deltas === 'final answer' && m.stop_reason === 'end_turn' &&
		    m.usage.output_tokens > 0, 'messages: final message',
		    JSON.stringify(m));
	});
}

async function toolUse() {
	await step('messages: tool_use, then its result echoed', async () => {
		await script({ text: 'let me look', tool_calls: [{
		    name: 'lookup', arguments: { q: 'pé 😀' } }] },
		    { text: 'result: {{last_tool_result}}' });
		const m = await client.messages.stream({ ...base, tools })
		    .finalMessage();
		const use = m.content[1];
		t.ok(m.stop_reason === 'tool_use' &&
		    textOf(m) === 'let me look' &&
		    use?.type === 'tool_use' && /^toolu_/.test(use.id) &&
		    use.name === 'lookup' && use.input.q === 'pé 😀',
		    'messages: streamed tool_use block', JSON.stringify(m));
		const r = await client.messages.create({ ...base, tools,
		    messages: [...hi, { role: 'assistant', content: m.content },
		    { role: 'user', content: [{ type: 'tool_result',
		    tool_use_id: use.id, content: [{ type: 'text',
		    text: '3 pears' }] }] }] });
		return t.ok(textOf(r) === 'result: 3 pears',
		    'messages: {{last_tool_result}}', JSON.stringify(r));
	});
	await step('messages: plain tool_use with a given id', async () => {
		await script({ tool_calls: [{ id: 'toolu_fixed', name: 'lookup',
		    arguments: { q: '{{last_user_text}}' } }] });
		const m = await client.messages.create({ ...base, tools });
		return t.ok(m.content.length === 1 &&
		    m.content[0].id === 'toolu_fixed' &&
		    m.content[0].input.q === 'hi there' &&
		    m.stop_reason === 'tool_use', 'messages: tool_use block',
		    JSON.stringify(m));
	});
}

async function validation() {
	const E = sdk.mod;
	const bad = [
	    ['messages: no max_tokens', { model, messages: hi }],
	    ['messages: tool_result without tool_use', { ...base,
		messages: [{ role: 'user', content: [{ type: 'tool_result',
		tool_use_id: 'toolu_nope', content: 'x' }] }] }],
	    ['messages: unknown block type', { ...base, messages: [{
		role: 'user', content: [{ type: 'video', data: 'x' }] }] }],
	    ['messages: malformed base64', { ...base, messages: [{
		role: 'user', content: [{ type: 'image', source: {
		type: 'base64', media_type: 'image/png',
		data: '@@not base64@@' } }] }] }],
	    ['messages: unknown role', { ...base, messages: [{
		role: 'system', content: 'x' }] }],
	    ['messages: no model', { max_tokens: 8, messages: hi }],
	    ['messages: tool_use left without tool_result', { ...base,
		messages: [...hi, { role: 'assistant', content: [{
		type: 'tool_use', id: 'toolu_a', name: 'lookup', input: {} }] },
		{ role: 'user', content: 'and?' }] }],
	    ['messages: a tool without input_schema', { ...base,
		tools: [{ name: 'lookup' }] }],
	];
	for (const [what, body] of bad) {
		const err = await expectThrow(t, what, () =>
		    client.messages.create(body), E.BadRequestError, 400);
		t.ok(err?.error?.type === 'error' &&
		    err.error.error?.type === 'invalid_request_error' &&
		    typeof err.error.error.message === 'string',
		    `${what}: Anthropic error envelope`,
		    JSON.stringify(err?.error));
	}
	const wrong = new Anthropic({ baseURL: url, apiKey: 'sk-ant-wrong',
	    maxRetries: 0 });
	const err = await expectThrow(t, 'messages: a wrong key', () =>
	    wrong.messages.create(base), E.AuthenticationError, 401);
	t.ok(err?.error?.error?.type === 'authentication_error',
	    'messages: 401 envelope', JSON.stringify(err?.error));
}

async function logged() {
	await step('log: path, headers and body of a request', async () => {
		await client.messages.create({ ...base,
		    metadata: { user_id: 'log-2' } });
		const e = await lastLogged();
		return t.ok(e.path === '/v1/messages' &&
		    // 1.x sends the key as a bearer token, 0.x as x-api-key.
		    (e.headers['x-api-key'] ?? e.headers.authorization) ===
		    (sdk.version.startsWith('0.') ? key : `Bearer ${key}`) &&
		    typeof e.headers['anthropic-version'] === 'string' &&
		    e.body.metadata.user_id === 'log-2' &&
		    e.body.max_tokens === 64 &&
		    /^[0-9a-f]{64}$/.test(e.raw_sha256) && e.status === 200,
		    'log: entry fields', JSON.stringify(e));
	});
	await step('models: list', async () => {
		const ids = [];
		for await (const m of client.models.list())
			ids.push(m.id);
		return ids.includes('claude-test');
	});
}

await reset();
await plain();
await streamed();
await toolUse();
await validation();
await logged();
await t.step('messages: the fault checks ran to the end', () =>
    faults(t, sdk, plainText, streamText, 'messages'));
done();
