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

// regress/discover/count.mjs: messages.countTokens() (GA and beta)
// through an Anthropic SDK, for discover.mjs.  The count must equal
// the double's tokenizer's on what depotd sent it: the logged
// /tokenize body is sent to the double again and its tokens counted.

import { PDF_LINES } from '../models/refs.mjs';

async function post(base, path, body) {
	const r = await fetch(base + path, { method: 'POST',
	    body: JSON.stringify(body) });
	return r.json();
}

// The double's own count of the last /tokenize depotd made.
async function doubleCount(base, dlog) {
	const q = (await dlog(base)).filter((e) => e.path === '/tokenize');
	if (q.length !== 1)
		return { n: -1, log: [] };
	const a = await post(base, '/tokenize', q[0].body);
	return { n: a.count ?? a.tokens.length, log: await dlog(base) };
}

export async function countChecks(t, client, sdk, env, h) {
	const messages = [{ role: 'user',
	    content: 'Hello, world. How many tokens is this?' }];
	const system = 'You are terse.';

	await t.step('messages.countTokens on m-llama-anth (llama.cpp) ' +
	    'equals the double\'s count', async () => {
		await h.dreset(env.llama);
		const r = await client.messages.countTokens({
		    model: 'm-llama-anth', messages, system });
		const d = await doubleCount(env.llama, h.dlog);
		const tpl = d.log.find((e) => e.path === '/apply-template');
		const s = JSON.stringify(tpl?.body ?? null);
		t.ok(s.includes('How many tokens') && s.includes(system),
		    'the chat template was applied to the system and the ' +
		    'messages', s);
		return t.ok(r.input_tokens === d.n && d.n > 10,
		    `input_tokens ${r.input_tokens} = ${d.n}`,
		    JSON.stringify(r));
	});

	await t.step('beta.messages.countTokens with a PDF reference ' +
	    'counts its text', async () => {
		await h.dreset(env.llama);
		const r = await client.beta.messages.countTokens({
		    model: 'm-llama-anth', betas: h.betas, messages: [{
		    role: 'user', content: [{ type: 'text', text: 'read' },
		    { type: 'document', source: { type: 'file',
		    file_id: h.pdf.id } }] }] });
		const d = await doubleCount(env.llama, h.dlog);
		const tpl = d.log.find((e) => e.path === '/apply-template');
		const s = JSON.stringify(tpl?.body ?? null);
		t.ok(s.includes(PDF_LINES[0]) && s.includes(PDF_LINES[1]),
		    'the PDF\'s text was templated', s.slice(0, 400));
		return t.ok(r.input_tokens === d.n && d.n > 10,
		    `input_tokens ${r.input_tokens} = ${d.n}`,
		    JSON.stringify(r));
	});

	await t.step('messages.countTokens on m-vllm-anth (vLLM /tokenize) ' +
	    'equals the double\'s count', async () => {
		await h.dreset(env.vllm);
		const r = await client.messages.countTokens({
		    model: 'm-vllm-anth', messages });
		const d = await doubleCount(env.vllm, h.dlog);
		return t.ok(r.input_tokens === d.n && d.n > 5,
		    `input_tokens ${r.input_tokens} = ${d.n}`,
		    JSON.stringify(r));
	});

	let err = null;
	try {
		await client.messages.countTokens({ model: 'm-plain', messages });
	} catch (e) {
		err = e;
	}
	t.ok(err?.status === 400 && /m-plain cannot count tokens/.test(
	    err.message), 'countTokens on m-plain (no tokenizer known): a ' +
	    '400 saying the model cannot count', err?.message);
	await h.expect400('countTokens with an image reference',
	    () => client.beta.messages.countTokens({ model: 'm-llama-anth',
	    betas: h.betas, messages: [{ role: 'user', content: [{
	    type: 'image', source: { type: 'file', file_id: h.png.id } }] }] }),
	    'm-llama-anth');
}
