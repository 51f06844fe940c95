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

// regress/models/messages.mjs ALIAS: the Anthropic SDK installed as ALIAS
// ("@anthropic-ai/sdk" 1.x, "anthropic0" 0.x) calling depotd's POST
// /v1/messages, and models.list/retrieve in the Anthropic dialect.
// Requests that name files go the way the Files API documents them:
// client.beta.messages with the files-api beta (0.x then adds
// ?beta=true to the path); files are uploaded with beta.files.upload.
// Streaming goes through messages.stream(), which checks the event
// order and assembles tool input from input_json_delta.

import { env, setup, failed, weatherSchema } from './common.mjs';
import { runAll } from './plan.mjs';

const { mod, t, clientFor, client } = setup(process.argv[2] ||
    '@anthropic-ai/sdk', (m, apiKey) => new (m.Anthropic ?? m.default)({
    baseURL: env.url, apiKey, maxRetries: 0, timeout: 120000 }));
const betas = ['files-api-2025-04-14'];

const docExtra = { title: 'The document', context: 'for the tests',
    cache_control: { type: 'ephemeral' } };

function result(m, streamed) {
	const content = m.content ?? [];
	let text = content.filter((b) => b.type === 'text')
	    .map((b) => b.text).join('');
	if (streamed !== undefined && streamed !== text)
		text = `deltas "${streamed}" != final "${text}"`;
	const calls = content.filter((b) => b.type === 'tool_use')
	    .map((b) => ({ id: b.id, name: b.name, args: b.input }));
	const u = m.usage;
	return { text, calls, stop: m.stop_reason, raw: m,
	    usage: u && { in: u.input_tokens, out: u.output_tokens } };
}

const a = {
	route: 'messages',
	mod,
	models: {
		client,
		shape: 'Anthropic',
		isModel: (m) => m.type === 'model' &&
		    typeof m.display_name === 'string' &&
		    typeof m.created_at === 'string',
	},
	stopText: 'end_turn',
	stopTool: 'tool_use',
	parts: {
		text: (text) => ({ type: 'text', text }),
		file: (file_id) => ({ type: 'document',
		    source: { type: 'file', file_id }, ...docExtra }),
		image: (file_id) => ({ type: 'image',
		    source: { type: 'file', file_id } }),
		fileExtra: docExtra,
	},
	api: 'anthropic',
	passThrough: { top_k: 3, metadata: { user_id: 'probe-user' },
	    stop_sequences: ['ZZZ'] },
	tools: [{ name: 'get_weather', description: 'The weather in a city',
	    input_schema: weatherSchema }],
	toolChoice: { type: 'tool', name: 'get_weather' },
	async upload(filename, data, type) {
		const f = await client.beta.files.upload({ betas,
		    file: await mod.toFile(data, filename, { type }) });
		return f.id;
	},
	async ask({ model, content, history, stream, tools, system, extra,
	    signal, timeout, onEvent, key }) {
		const opts = timeout ? { signal, timeout } : { signal };
		const c = key ? clientFor(key) : client;
		const body = { model, max_tokens: 256, ...extra,
		    messages: history ?? [{ role: 'user', content }] };
		if (system)
			body.system = system;
		if (tools)
			body.tools = tools;
		// File references the documented way: beta, files-api.
		let api = c.messages;
		if (JSON.stringify(body.messages).includes('"file_id"')) {
			api = c.beta.messages;
			body.betas = betas;
		}
		if (!stream)
			return result(await api.create(body, opts));
		const s = api.stream(body, opts);
		let text = '';
		for await (const ev of s) {
			onEvent?.(ev);
			if (ev.type === 'content_block_delta' &&
			    ev.delta.type === 'text_delta')
				text += ev.delta.text;
		}
		return result(await s.finalMessage(), text);
	},
	followUp(content, r, output) {
		return [{ role: 'user', content },
		    { role: 'assistant', content: r.raw.content },
		    { role: 'user', content: [{ type: 'tool_result',
		    tool_use_id: r.calls[0].id, content: output }] }];
	},
	notFoundCode: (err) => err.error?.type === 'error' &&
	    err.error?.error?.type === 'not_found_error',
};


await runAll(t, a, 'm-anth');
process.exit(failed() ? 1 : 0);
