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

// regress/coderun/openai.mjs ALIAS: the OpenAI SDK installed as ALIAS
// ("openai" 7, "openai6") running code through depotd's POST
// /v1/chat/completions and POST /v1/responses, against both upstream
// apis, plain and through the SDK's stream helpers; the Files API
// through files.retrieve and files.content.  With the native
// code_interpreter tool declared, a Responses caller gets the run as a
// code_interpreter_call item.

import { env, loadSdk, reporter, failed, runRoute } from './common.mjs';

const alias = process.argv[2] || 'openai';
const { mod, name, version } = loadSdk(alias);
const OpenAI = mod.OpenAI ?? mod.default;
const t = reporter(`${name} ${version}`);
const client = new OpenAI({ baseURL: env.url + '/v1', apiKey: env.key,
    maxRetries: 0, timeout: 120000 });
const schema = { type: 'object', properties: { city: { type: 'string' } },
    required: ['city'] };

const own = {
	meta: (id) => client.files.retrieve(id),
	async bytes(id) {
		const r = await client.files.content(id);
		return Buffer.from(await r.arrayBuffer());
	},
};

async function upload(filename, data, type) {
	const f = await client.files.create({ purpose: 'user_data',
	    file: await mod.toFile(data, filename, { type }) });
	return f.id;
}

// The SDK's error carries the body's "error" object.
const envelope = (err) => typeof err.error?.message === 'string';

function chatResult(c, events) {
	const msg = c.choices[0]?.message ?? {};
	return { text: msg.content ?? '', stop: c.choices[0]?.finish_reason,
	    calls: (msg.tool_calls ?? []).map((tc) => ({ id: tc.id,
	    name: tc.function?.name, args: JSON.parse(tc.function?.arguments ||
	    'null') })), events };
}

const chat = {
	route: 'chat', mod, own, upload, envelope,
	stopText: 'stop',
	stopTool: 'tool_calls',
	parts: {
		text: (text) => ({ type: 'text', text }),
		file: (file_id) => ({ type: 'file', file: { file_id } }),
	},
	codeTool: { type: 'otari_code_execution' },
	ownTool: { type: 'function', function: { name: 'get_weather',
	    description: 'The weather in a city', parameters: schema } },
	async ask({ model, stream, content, tools }) {
		const body = { model, tools,
		    messages: [{ role: 'user', content }] };
		if (!stream)
			return chatResult(await client.chat.completions
			    .create(body));
		const s = client.chat.completions.stream(body);
		const events = [];
		for await (const chunk of s)
			events.push(chunk);
		return chatResult(await s.finalChatCompletion(), events);
	},
	shown: (events) => events.some((e) => (e.choices ?? []).some((c) =>
	    c.delta?.tool_calls?.length > 0 ||
	    c.finish_reason === 'tool_calls')),
};

function responsesResult(resp, events) {
	const out = resp.output ?? [];
	return { stop: resp.status, events, blocks: out,
	    text: out.filter((o) => o.type === 'message')
	    .flatMap((o) => o.content ?? [])
	    .filter((c) => c.type === 'output_text')
	    .map((c) => c.text).join(''),
	    calls: out.filter((o) => o.type === 'function_call')
	    .map((o) => ({ id: o.call_id, name: o.name,
	    args: JSON.parse(o.arguments || 'null') })) };
}

const responses = {
	route: 'responses', mod, own, upload, envelope,
	stopText: 'completed',
	stopTool: 'completed',
	parts: {
		text: (text) => ({ type: 'input_text', text }),
		file: (file_id) => ({ type: 'input_file', file_id }),
	},
	codeTool: { type: 'otari_code_execution' },
	ownTool: { type: 'function', name: 'get_weather',
	    description: 'The weather in a city', parameters: schema },
	async ask({ model, stream, content, tools }) {
		const body = { model, tools,
		    input: [{ role: 'user', content }] };
		if (!stream)
			return responsesResult(await client.responses
			    .create(body));
		const s = client.responses.stream(body);
		const events = [];
		for await (const ev of s)
			events.push(ev);
		return responsesResult(await s.finalResponse(), events);
	},
	shown: (events) => events.some((e) =>
	    e.type?.startsWith('response.function_call_arguments') ||
	    e.item?.type === 'function_call' ||
	    (e.response?.output ?? []).some((o) =>
	    o.type === 'function_call')),
	native: {
		tool: { type: 'code_interpreter',
		    container: { type: 'auto' } },
		order: ['code_interpreter_call', 'message'],
		read: (out) => ({ order: out.map((o) => o.type),
		    runs: out.filter((o) =>
		    o.type === 'code_interpreter_call').map((c) => {
			const logs = (c.outputs ?? []).map((o) =>
			    o.logs ?? '').join('');
			return { code: c.code, stdout: logs,
			    files: [...logs.matchAll(
			    /\(file_id: (file-[0-9A-Za-z_-]+)\)/g)]
			    .map((x) => x[1]) };
		}) }),
		streamed: (events) => events.some((e) =>
		    e.type === 'response.output_item.added' &&
		    e.item?.type === 'code_interpreter_call') &&
		    events.some((e) =>
		    e.type === 'response.code_interpreter_call_code.done'),
		shown: (events) => events.some((e) =>
		    e.type?.startsWith('response.function_call_arguments') ||
		    e.item?.type === 'function_call'),
	},
};

await runRoute(t, chat);
await runRoute(t, responses);
process.exit(failed() ? 1 : 0);
