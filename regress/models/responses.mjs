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

// regress/models/responses.mjs ALIAS: the OpenAI SDK installed as ALIAS
// calling depotd's POST /v1/responses, which no configured upstream
// speaks: every request is translated to chat completions or Messages.
// Streaming goes through responses.stream(), which checks the streamed
// output items against response.completed.

import { failed, weatherSchema } from './common.mjs';
import { openai } from './openai.mjs';
import { runAll } from './plan.mjs';

const { mod, t, clientFor, client } = openai(process.argv[2]);

function result(resp, streamed) {
	const out = resp.output ?? [];
	let text = out.filter((o) => o.type === 'message')
	    .flatMap((o) => o.content ?? [])
	    .filter((c) => c.type === 'output_text')
	    .map((c) => c.text).join('');
	if (streamed !== undefined && streamed !== text)
		text = `deltas "${streamed}" != final "${text}"`;
	const calls = out.filter((o) => o.type === 'function_call')
	    .map((o) => ({ id: o.call_id, name: o.name,
	    args: JSON.parse(o.arguments || 'null') }));
	const u = resp.usage;
	return { text, calls, stop: resp.status, raw: resp,
	    usage: u && { in: u.input_tokens, out: u.output_tokens } };
}

const a = {
	route: 'responses',
	mod,
	stopText: 'completed',
	stopTool: 'completed',
	parts: {
		text: (text) => ({ type: 'input_text', text }),
		file: (file_id) => ({ type: 'input_file', file_id }),
		image: (file_id) => ({ type: 'input_image', file_id,
		    detail: 'auto' }),
	},
	bare: {
		file: (file_id) => ({ type: 'input_file', file_id }),
		image: (file_id) => ({ type: 'input_image', file_id,
		    detail: 'auto' }),
	},
	api: null,
	passThrough: {},
	tools: [{ type: 'function', name: 'get_weather',
	    description: 'The weather in a city', parameters: weatherSchema }],
	toolChoice: { type: 'function', name: 'get_weather' },
	async upload(filename, data, type) {
		const f = await client.files.create({ purpose: 'user_data',
		    file: await mod.toFile(data, filename, { type }) });
		return f.id;
	},
	async ask({ model, content, bare, history, stream, tools, system,
	    extra, signal, timeout, onEvent, key }) {
		const opts = timeout ? { signal, timeout } : { signal };
		const c = key ? clientFor(key) : client;
		const body = { model, ...extra, input: history ??
		    [...(bare ?? []), { role: 'user', content }] };
		if (system)
			body.instructions = system;
		if (tools)
			body.tools = tools;
		if (!stream)
			return result(await c.responses.create(body, opts));
		const s = c.responses.stream(body, opts);
		let text = '';
		for await (const ev of s) {
			onEvent?.(ev);
			if (ev.type === 'response.output_text.delta')
				text += ev.delta;
		}
		return result(await s.finalResponse(), text);
	},
	followUp(content, r, output) {
		const calls = r.raw.output.filter((o) =>
		    o.type === 'function_call').map((o) => ({
		    type: 'function_call', call_id: o.call_id, name: o.name,
		    arguments: o.arguments }));
		return [{ role: 'user', content }, ...calls,
		    { type: 'function_call_output', call_id: r.calls[0].id,
		    output }];
	},
	notFoundCode: (err) => err.code === 'model_not_found' &&
	    err.type === 'not_found_error',
};

await runAll(t, a, null);
process.exit(failed() ? 1 : 0);
