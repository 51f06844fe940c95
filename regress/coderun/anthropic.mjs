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

// regress/coderun/anthropic.mjs ALIAS: the Anthropic SDK installed as
// ALIAS ("@anthropic-ai/sdk" 1.x, "anthropic0" 0.x) running code
// through depotd's POST /v1/messages, against both upstream apis,
// plain and through messages.stream() and finalMessage(); the CSV goes
// in as a container_upload block, with the files-api beta as the Files
// API documents it; the Files API through beta.files.  With the native
// code_execution tool declared, the run comes back as server_tool_use
// and code_execution_tool_result blocks.

import { env, loadSdk, reporter, failed, runRoute,
    BETAS } from './common.mjs';

const alias = process.argv[2] || '@anthropic-ai/sdk';
const { mod, name, version } = loadSdk(alias);
const Anthropic = mod.Anthropic ?? mod.default;
const t = reporter(`${name} ${version}`);
const client = new Anthropic({ baseURL: env.url, apiKey: env.key,
    maxRetries: 0, timeout: 120000 });
const schema = { type: 'object', properties: { city: { type: 'string' } },
    required: ['city'] };

function result(m, events) {
	const content = m.content ?? [];
	return { stop: m.stop_reason, events, blocks: content,
	    text: content.filter((b) => b.type === 'text')
	    .map((b) => b.text).join(''),
	    calls: content.filter((b) => b.type === 'tool_use')
	    .map((b) => ({ id: b.id, name: b.name, args: b.input })) };
}

const messages = {
	route: 'messages',
	mod,
	stopText: 'end_turn',
	stopTool: 'tool_use',
	parts: {
		text: (text) => ({ type: 'text', text }),
		file: (file_id) => ({ type: 'container_upload', file_id }),
	},
	codeTool: { type: 'otari_code_execution' },
	ownTool: { name: 'get_weather', description: 'The weather in a city',
	    input_schema: schema },
	async upload(filename, data, type) {
		const f = await client.beta.files.upload({ betas: BETAS,
		    file: await mod.toFile(data, filename, { type }) });
		return f.id;
	},
	own: {
		meta: (id) => client.beta.files.retrieveMetadata(id,
		    { betas: BETAS }),
		async bytes(id) {
			const r = await client.beta.files.download(id,
			    { betas: BETAS });
			return Buffer.from(await r.arrayBuffer());
		},
	},
	envelope: (err) => err.error?.type === 'error' &&
	    typeof err.error?.error?.type === 'string',
	async ask({ model, stream, content, tools }) {
		const body = { model, max_tokens: 512, tools, betas: BETAS,
		    messages: [{ role: 'user', content }] };
		if (!stream)
			return result(await client.beta.messages.create(body));
		const s = client.beta.messages.stream(body);
		const events = [];
		for await (const ev of s)
			events.push(ev);
		return result(await s.finalMessage(), events);
	},
	shown: (events) => events.some((e) =>
	    /tool_use$/.test(e.content_block?.type ?? '') ||
	    e.delta?.type === 'input_json_delta' ||
	    e.delta?.stop_reason === 'tool_use'),
	native: {
		tool: { type: 'code_execution_20250825',
		    name: 'code_execution' },
		order: ['server_tool_use', 'code_execution_tool_result',
		    'text'],
		read(blocks) {
			const res = blocks.filter((b) =>
			    b.type === 'code_execution_tool_result');
			const runs = blocks.filter((b) =>
			    b.type === 'server_tool_use' &&
			    b.name === 'code_execution').map((u) => {
				const c = res.find((x) =>
				    x.tool_use_id === u.id)?.content;
				return { code: u.input?.code,
				    stdout: c?.stdout,
				    files: (c?.content ?? []).filter((o) =>
				    o.type === 'code_execution_output')
				    .map((o) => o.file_id) };
			});
			return { runs, order: blocks.map((b) => b.type) };
		},
		streamed: (events) => ['server_tool_use',
		    'code_execution_tool_result'].every((type) =>
		    events.some((e) => e.type === 'content_block_start' &&
		    e.content_block?.type === type)),
		shown: (events) => events.some((e) =>
		    e.content_block?.type === 'tool_use' ||
		    e.delta?.stop_reason === 'tool_use'),
	},
};

await runRoute(t, messages);
process.exit(failed() ? 1 : 0);
