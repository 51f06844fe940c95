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

// regress/models/chat.mjs ALIAS: the OpenAI SDK installed as ALIAS
// ("openai", "openai6") calling depotd's POST /v1/chat/completions, and
// models.list/retrieve in the OpenAI dialect.  The client gets baseURL,
// apiKey and maxRetries 0 (each check counts the upstream requests).

import { failed, weatherSchema } from './common.mjs';
import { openai } from './openai.mjs';
import { runAll } from './plan.mjs';

const { mod, t, clientFor, client } = openai(process.argv[2]);

function result(c, streamed, u = c.usage) {
	const msg = c.choices[0]?.message ?? {};
	const calls = (msg.tool_calls ?? []).map((tc) => ({ id: tc.id,
	    name: tc.function?.name, args: JSON.parse(tc.function?.arguments ||
	    'null') }));
	let text = msg.content ?? '';
	// The deltas must add up to the final message.
	if (streamed !== undefined && streamed !== text)
		text = `deltas "${streamed}" != final "${text}"`;
	return { text, calls, stop: c.choices[0]?.finish_reason, raw: c,
	    usage: u && { in: u.prompt_tokens, out: u.completion_tokens } };
}

const a = {
	route: 'chat',
	mod,
	models: {
		client,
		shape: 'OpenAI',
		isModel: (m) => m.object === 'model' &&
		    typeof m.created === 'number' &&
		    typeof m.owned_by === 'string',
	},
	stopText: 'stop',
	stopTool: 'tool_calls',
	parts: {
		text: (text) => ({ type: 'text', text }),
		file: (file_id) => ({ type: 'file', file: { file_id } }),
		image: (file_id) => ({ type: 'image_url',
		    image_url: { file_id } }),
	},
	api: 'openai',
	passThrough: { seed: 7, user: 'probe-user', top_p: 0.5,
	    stop: ['ZZZ'] },
	tools: [{ type: 'function', function: { name: 'get_weather',
	    description: 'The weather in a city',
	    parameters: weatherSchema } }],
	toolChoice: { type: 'function', function: { name: 'get_weather' } },
	async upload(filename, data, type) {
		const f = await client.files.create({ purpose: 'user_data',
		    file: await mod.toFile(data, filename, { type }) });
		return f.id;
	},
	async ask({ model, content, history, stream, tools, system, extra,
	    signal, timeout, onEvent, key }) {
		const opts = timeout ? { signal, timeout } : { signal };
		const c = key ? clientFor(key) : client;
		const body = { model, ...extra,
		    messages: history ?? [{ role: 'user', content }] };
		if (system)
			body.messages.unshift({ role: 'system',
			    content: system });
		if (tools)
			body.tools = tools;
		if (!stream)
			return result(await c.chat.completions.create(body,
			    opts));
		body.stream_options = { include_usage: true };
		const s = c.chat.completions.stream(body, opts);
		let text = '', usage;
		for await (const chunk of s) {
			onEvent?.(chunk);
			text += chunk.choices[0]?.delta?.content ?? '';
			usage = chunk.usage ?? usage;
		}
		return result(await s.finalChatCompletion(), text, usage);
	},
	followUp(content, r, output) {
		const msg = r.raw.choices[0].message;
		return [{ role: 'user', content },
		    { role: 'assistant', content: msg.content ?? null,
		    tool_calls: msg.tool_calls.map((tc) => ({ id: tc.id,
		    type: 'function', function: { name: tc.function.name,
		    arguments: tc.function.arguments } })) },
		    { role: 'tool', tool_call_id: r.calls[0].id,
		    content: output }];
	},
	notFoundCode: (err) => err.code === 'model_not_found' &&
	    err.type === 'not_found_error',
};


await runAll(t, a, 'm-chat');
process.exit(failed() ? 1 : 0);
