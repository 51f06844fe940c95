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

// regress/discover/discover.mjs ALIAS: one SDK (openai, openai6,
// @anthropic-ai/sdk, anthropic0) against depotd in front of the
// doubles regress/discover/suite.sh starts: a PDF to a model whose
// upstream says it has no PDF input reaches it as text; an image to a
// model whose upstream has no vision is a 400 naming the model, and
// the upstream sees nothing; with vision (Ollama) the image goes
// native.  The Anthropic SDKs also count tokens (messages.countTokens,
// GA and beta with a file reference): the count equals the double's
// own tokenizer's on what depotd sent it.

import { loadSdk, need, reporter, failed } from '../harness/sdk.mjs';
import { pdfFile, pngFile, PDF_LINES } from '../models/refs.mjs';

const alias = process.argv[2];
const env = { url: need('DEPOT_URL'), key: need('DEPOT_KEY'),
    llama: need('LLAMA_URL'), ollama: need('OLLAMA_URL'),
    vllm: need('VLLM_URL'), modules: need('SDK_MODULES') };
const sdk = loadSdk(env.modules, alias);
const t = reporter(`${sdk.name} ${sdk.version}`);
const anthropic = sdk.name === '@anthropic-ai/sdk';
const betas = ['files-api-2025-04-14'];
const client = anthropic ?
    new (sdk.mod.Anthropic ?? sdk.mod.default)({ baseURL: env.url,
    apiKey: env.key, maxRetries: 0 }) :
    new (sdk.mod.OpenAI ?? sdk.mod.default)({ baseURL: env.url + '/v1',
    apiKey: env.key, maxRetries: 0 });

async function dlog(base) {
	const r = await fetch(base + '/__log');
	return (await r.json()).requests;
}
async function dreset(base) {
	await fetch(base + '/__reset', { method: 'POST', body: '{}' });
}
const modelCalls = (l) => l.filter((q) => q.path.startsWith('/v1/') &&
    q.path !== '/v1/models');

async function upload(name, data, type) {
	if (anthropic) {
		const f = await client.beta.files.upload({ betas,
		    file: await sdk.mod.toFile(data, name, { type }) });
		return f.id;
	}
	const f = await client.files.create({ purpose: 'user_data',
	    file: await sdk.mod.toFile(data, name, { type }) });
	return f.id;
}

// One user turn of text and a file or image reference, in the dialect.
function turn(text, ref) {
	if (anthropic) {
		const block = ref.image ? { type: 'image', source: { type: 'file',
		    file_id: ref.id } } : { type: 'document',
		    source: { type: 'file', file_id: ref.id } };
		return [{ role: 'user', content: [{ type: 'text', text },
		    block] }];
	}
	const part = ref.image ? { type: 'image_url',
	    image_url: { file_id: ref.id } } : { type: 'file',
	    file: { file_id: ref.id } };
	return [{ role: 'user', content: [{ type: 'text', text }, part] }];
}

async function ask(model, messages) {
	if (anthropic)
		return client.beta.messages.create({ model, max_tokens: 64,
		    messages, betas });
	return client.chat.completions.create({ model, messages });
}

async function expect400(what, fn, model) {
	let err = null;
	try {
		await fn();
	} catch (e) {
		err = e;
	}
	return t.ok(err !== null && err.status === 400 &&
	    String(err.message).includes(model),
	    `${what}: a 400 naming ${model}`,
	    err ? `${err.status} ${err.message}` : 'no error');
}

// The model's text of what reached the upstream.
const bodyText = (q) => JSON.stringify(q?.body ?? null);

const pdf = { id: null };
const png = { id: null, image: true };
const llamaModel = anthropic ? 'm-llama-anth' : 'm-llama';
const pdfRe = new RegExp(`${PDF_LINES[0]}[^]*${PDF_LINES[1]}`);

await t.step('upload a PDF and a PNG through the SDK', async () => {
	pdf.id = await upload('disc.pdf', pdfFile(PDF_LINES),
	    'application/pdf');
	png.id = await upload('disc.png', pngFile(), 'image/png');
	return /^file-/.test(pdf.id) && /^file-/.test(png.id);
});

await t.step(`a PDF to ${llamaModel} (llama.cpp: no PDF input) ` +
    'arrives as text', async () => {
	await dreset(env.llama);
	await ask(llamaModel, turn('read this', pdf));
	const q = modelCalls(await dlog(env.llama));
	const s = bodyText(q[0]);
	return t.ok(q.length === 1 && pdfRe.test(s) &&
	    !s.includes('"document"') && !s.includes('"file"'),
	    'the upstream got the PDF\'s text, no document or file block',
	    s.slice(0, 600));
});

await expect400(`an image to ${llamaModel} (llama.cpp: no vision)`,
    async () => {
	await dreset(env.llama);
	await ask(llamaModel, turn('look', png));
}, llamaModel);
await t.step(`the refused image never reached the upstream`, async () =>
    modelCalls(await dlog(env.llama)).length === 0);

if (!anthropic) {
	await t.step('an image to m-ollama (Ollama: vision) goes native',
	    async () => {
		await dreset(env.ollama);
		await ask('m-ollama', turn('look', png));
		const s = bodyText(modelCalls(await dlog(env.ollama))[0]);
		return t.ok(s.includes('data:image/png;base64,'),
		    'an image_url data: URL upstream', s.slice(0, 300));
	});
	await t.step('a PDF to m-ollama (no PDF input) arrives as text',
	    async () => {
		await dreset(env.ollama);
		await ask('m-ollama', turn('read', pdf));
		const s = bodyText(modelCalls(await dlog(env.ollama))[0]);
		return t.ok(pdfRe.test(s) && !s.includes('"file"'),
		    'text, no file part', s.slice(0, 300));
	});
	// Without discover, today's behaviour: the file part goes, and
	// llama-server refuses it.
	let err = null;
	try {
		await dreset(env.llama);
		await ask('m-plain', turn('read', pdf));
	} catch (e) {
		err = e;
	}
	t.ok(err?.status === 400 && /unsupported content/.test(err.message),
	    'm-plain (no discover): the PDF goes as a file part and ' +
	    'llama.cpp refuses it, as before', err?.message);
}

if (anthropic)
	await (await import('./count.mjs')).countChecks(t, client, sdk, env,
	    { pdf, png, betas, dlog, dreset, expect400 });

process.exit(failed() ? 1 : 0);
