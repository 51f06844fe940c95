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

// regress/xstream/sdk.mjs: the official SDKs read what depotd's stream
// translators write.  test_xstream dumps each translated stream into a
// directory; this serves each file over HTTP as an upstream answer
// would come, and points each SDK's streaming helpers at it.
//
//	node sdk.mjs DIR SDK_MODULES PORT

import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const [dir, modules, port] = process.argv.slice(2);
const requireSdk = createRequire(path.resolve(modules, 'package.json'));
let failures = 0;

function version(alias) {
	return JSON.parse(fs.readFileSync(path.join(modules, 'node_modules',
	    alias, 'package.json'), 'utf8')).version;
}

function ok(cond, what, detail) {
	if (cond) {
		console.log(`ok - ${what}`);
		return;
	}
	failures++;
	console.log(`not ok - ${what}`);
	if (detail !== undefined)
		console.log(`# ${JSON.stringify(detail)}`.slice(0, 2000));
}

// GET or POST /NAME/v1/...: the file NAME.sse, as a stream.
const server = http.createServer((req, res) => {
	req.resume();
	req.on('end', () => {
		const name = req.url.split('/')[1];
		const file = path.join(dir, `${name}.sse`);
		if (!/^[a-z-]+$/.test(name) || !fs.existsSync(file)) {
			res.writeHead(404).end();
			return;
		}
		res.writeHead(200, { 'content-type': 'text/event-stream' });
		// In small pieces, so that events arrive split.
		const body = fs.readFileSync(file);
		for (let i = 0; i < body.length; i += 37)
			res.write(body.subarray(i, i + 37));
		res.end();
	});
});
await new Promise((resolve) => server.listen(Number(port), '127.0.0.1',
    resolve));
const base = (name) => `http://127.0.0.1:${port}/${name}/v1`;

const TEXT = 'Hello, w\u00f6rld "q"\n';
const CALLS = [['get_weather', { city: 'Paris' }], ['get_time', {}]];

async function attempt(what, fn) {
	try {
		await fn();
	} catch (e) {
		ok(false, `${what} (threw)`, String(e && e.stack || e));
	}
}

async function throwsApi(sdk, what, fn, message) {
	try {
		await fn();
		ok(false, what, 'no error raised');
	} catch (e) {
		ok(e instanceof sdk.APIError && String(e.message)
		    .includes(message), what, String(e));
	}
}

async function chatChecks(alias) {
	const sdk = requireSdk(alias);
	const tag = `${alias} ${version(alias)}`;
	const cases = [
		['chat-chat-tools', 'Checking.', CALLS, 'tool_calls'],
		['msg-chat-text', TEXT, [], 'stop'],
		['msg-chat-tools', 'Checking.', CALLS, 'tool_calls'],
	];
	for (const [name, text, calls, finish] of cases) {
		const client = new sdk.OpenAI({ apiKey: 'k', maxRetries: 0,
		    baseURL: base(name) });
		const req = { model: 'caller-m', stream: true,
		    messages: [{ role: 'user', content: 'hi' }] };
		await attempt(`${tag}: ${name}: chat.completions.create`,
		    async () => {
			let got = '', usage = null, n = 0;
			const args = [];
			for await (const chunk of await client.chat.completions
			    .create(req)) {
				n++;
				if (chunk.usage)
					usage = chunk.usage;
				const d = chunk.choices[0]?.delta;
				got += d?.content ?? '';
				for (const tc of d?.tool_calls ?? []) {
					const a = tc.function?.arguments;
					args[tc.index] = (args[tc.index] ??
					    '') + (a ?? '');
				}
			}
			ok(got === text, `${tag}: ${name}: streamed text`, got);
			ok(JSON.stringify(args.map((a) => JSON.parse(a))) ===
			    JSON.stringify(calls.map((c) => c[1])),
			    `${tag}: ${name}: streamed tool arguments`, args);
			ok(usage?.prompt_tokens === 12 &&
			    usage?.completion_tokens === 7,
			    `${tag}: ${name}: usage chunk`, usage);
		});
		await attempt(`${tag}: ${name}: chat.completions.stream`,
		    async () => {
			const c = await client.chat.completions.stream(req)
			    .finalChatCompletion();
			const m = c.choices[0].message;
			ok(m.content === text && c.choices[0].finish_reason ===
			    finish && c.model === 'caller-m',
			    `${tag}: ${name}: finalChatCompletion`, c);
			const got = (m.tool_calls ?? []).map((t) => [
			    t.function.name, JSON.parse(t.function.arguments)]);
			ok(JSON.stringify(got) === JSON.stringify(calls) &&
			    (m.tool_calls ?? []).every((t) => t.id &&
			    t.type === 'function'),
			    `${tag}: ${name}: final tool calls`, m.tool_calls);
		});
	}
	const client = new sdk.OpenAI({ apiKey: 'k', baseURL: base('err-chat'),
	    maxRetries: 0 });
	await throwsApi(sdk, `${tag}: an error chunk raises APIError`,
	    async () => {
		for await (const _ of await client.chat.completions.create({
		    model: 'm', stream: true, messages: [] }))
			;
	}, 'upstream failed');
}

async function responsesChecks(alias) {
	const sdk = requireSdk(alias);
	const tag = `${alias} ${version(alias)}`;
	const cases = [
		['chat-resp-text', TEXT, []],
		['chat-resp-tools', 'Checking.', CALLS],
		['msg-resp-tools', 'Checking.', CALLS],
		['resp-resp-text', 'Hi', []],
	];
	for (const [name, text, calls] of cases) {
		const client = new sdk.OpenAI({ apiKey: 'k', maxRetries: 0,
		    baseURL: base(name) });
		const req = { model: 'caller-m', input: 'hi' };
		await attempt(`${tag}: ${name}: responses.stream`, async () => {
			const r = await client.responses.stream(req)
			    .finalResponse();
			ok(r.output_text === text && r.status === 'completed' &&
			    r.model === 'caller-m',
			    `${tag}: ${name}: finalResponse text`, r);
			const got = r.output.filter((o) => o.type ===
			    'function_call').map((o) => [o.name,
			    JSON.parse(o.arguments)]);
			ok(JSON.stringify(got) === JSON.stringify(calls),
			    `${tag}: ${name}: finalResponse calls`, r.output);
			ok(r.usage?.input_tokens === 12 &&
			    r.usage?.output_tokens === 7,
			    `${tag}: ${name}: finalResponse usage`, r.usage);
		});
		await attempt(`${tag}: ${name}: responses.create`, async () => {
			let got = '', last = null;
			for await (const ev of await client.responses.create({
			    ...req, stream: true })) {
				if (ev.type === 'response.output_text.delta')
					got += ev.delta;
				last = ev;
			}
			ok(got === text && last?.type === 'response.completed',
			    `${tag}: ${name}: streamed events`, got);
		});
	}
	await attempt(`${tag}: chat-resp-length: responses.stream`,
	    async () => {
		const client = new sdk.OpenAI({ apiKey: 'k', maxRetries: 0,
		    baseURL: base('chat-resp-length') });
		const r = await client.responses.stream({ model: 'caller-m',
		    input: 'hi' }).finalResponse();
		ok(r.status === 'incomplete' && r.output_text === TEXT &&
		    r.incomplete_details?.reason === 'max_output_tokens',
		    `${tag}: chat-resp-length: an incomplete response`, r);
	});
	const client = new sdk.OpenAI({ apiKey: 'k', baseURL: base('err-resp'),
	    maxRetries: 0 });
	await throwsApi(sdk, `${tag}: Responses error event raises APIError`,
	    () => client.responses.stream({ model: 'm', input: 'x' })
	    .finalResponse(), 'stalled');
}

async function messagesChecks(alias) {
	const sdk = requireSdk(alias);
	const Anthropic = sdk.Anthropic ?? sdk.default;
	const tag = `${alias} ${version(alias)}`;
	const cases = [
		['chat-msg-text', [['text', TEXT]], 'end_turn'],
		['chat-msg-tools', [['text', 'Checking.'], ...CALLS.map((c) =>
		    ['tool_use', c])], 'tool_use'],
		['msg-msg-tools', [['thinking', 'hmm'], ['text', 'Checking.'],
		    ...CALLS.map((c) => ['tool_use', c])], 'tool_use'],
	];
	for (const [name, blocks, stop] of cases) {
		const client = new Anthropic({ apiKey: 'k', baseURL:
		    base(name).replace(/\/v1$/, ''), maxRetries: 0 });
		const req = { model: 'caller-m', max_tokens: 100,
		    messages: [{ role: 'user', content: 'hi' }] };
		await attempt(`${tag}: ${name}: messages.stream`, async () => {
			const m = await client.messages.stream(req)
			    .finalMessage();
			const got = m.content.map((b) => [b.type,
			    b.type === 'text' ? b.text : b.type === 'thinking' ?
			    b.thinking : [b.name, b.input]]);
			ok(JSON.stringify(got) === JSON.stringify(blocks),
			    `${tag}: ${name}: finalMessage content`, m.content);
			ok(m.stop_reason === stop && m.model === 'caller-m' &&
			    m.usage.output_tokens === 7,
			    `${tag}: ${name}: stop reason, model, usage`, m);
		});
		await attempt(`${tag}: ${name}: messages.create`, async () => {
			const seen = [];
			for await (const ev of await client.messages.create({
			    ...req, stream: true }))
				seen.push(ev.type);
			ok(seen[0] === 'message_start' &&
			    seen.at(-1) === 'message_stop',
			    `${tag}: ${name}: streamed events`, seen);
		});
	}
	const client = new Anthropic({ apiKey: 'k', baseURL:
	    base('err-msg').replace(/\/v1$/, ''), maxRetries: 0 });
	await throwsApi(sdk, `${tag}: event: error raises APIError`,
	    () => client.messages.stream({ model: 'm', max_tokens: 5,
	    messages: [] }).finalMessage(), 'busy');
}

try {
	for (const alias of ['openai', 'openai6']) {
		await chatChecks(alias);
		await responsesChecks(alias);
	}
	for (const alias of ['@anthropic-ai/sdk', 'anthropic0'])
		await messagesChecks(alias);
} finally {
	server.close();
}
process.exit(failures ? 1 : 0);
