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

// regress/sdk/openai.mjs ALIAS: the OpenAI SDK installed as ALIAS
// ("openai", "openai6") against depotd, through its public API only:
// the client gets baseURL and apiKey and nothing else.

import fs from 'node:fs';
import path from 'node:path';
import { env, loadSdk, reporter, failed, testFile, bodyBytes, idPattern,
    serverError, expectError, recordingProxy } from './common.mjs';

const alias = process.argv[2] || 'openai';
const { mod, name, version } = loadSdk(alias);
const OpenAI = mod.OpenAI ?? mod.default;
const t = reporter(`${name} ${version}`);
const baseURL = env.url + '/v1';
const client = new OpenAI({ baseURL, apiKey: env.key });
const bearer = { Authorization: `Bearer ${env.key}` };

const uploaded = [];	// { obj, data }

function sameObject(a, b) {
	return a.id === b.id && a.object === 'file' && b.object === 'file' &&
	    a.bytes === b.bytes && a.filename === b.filename &&
	    a.purpose === b.purpose && a.created_at === b.created_at;
}

// Newest first: the uploads ran one after another, so the default
// (desc) order is the reverse of the upload order.  (The OpenAI shape
// shows seconds only; the server orders by the full timestamp.)
function newestFirst(ids) {
	const want = uploaded.map((u) => u.obj.id).reverse();
	return JSON.stringify(ids) === JSON.stringify(want);
}

async function uploads() {
	const stream = testFile(`${alias}-stream.txt`, 300 * 1024 + 7);
	await t.step('upload from fs.createReadStream', async () => {
		const obj = await client.files.create({
		    file: fs.createReadStream(stream.path),
		    purpose: 'user_data' });
		uploaded.push({ obj, data: stream.data });
		t.ok(idPattern.test(obj.id), 'stream upload: id is file- and ' +
		    '32 hex digits', obj.id);
		t.ok(obj.object === 'file' && obj.status === 'processed',
		    'stream upload: object "file", status "processed"',
		    JSON.stringify(obj));
		t.ok(obj.bytes === stream.data.length,
		    'stream upload: bytes is the file size', obj.bytes);
		t.ok(obj.filename === path.basename(stream.path),
		    'stream upload: filename is the stream path\'s name',
		    obj.filename);
		return obj.purpose === 'user_data';
	});

	const buf = testFile(`${alias}-buffer.bin`, 4096 + 3);
	await t.step('upload from a Buffer with toFile', async () => {
		const obj = await client.files.create({
		    file: await mod.toFile(buf.data, 'buffer "quoted".bin'),
		    purpose: 'assistants' });
		uploaded.push({ obj, data: buf.data });
		t.ok(obj.bytes === buf.data.length &&
		    obj.filename === 'buffer "quoted".bin' &&
		    obj.purpose === 'assistants',
		    'buffer upload: bytes, filename with quotes, purpose kept',
		    JSON.stringify(obj));
		return idPattern.test(obj.id);
	});

	// Enough files for at least three pages of two.
	await t.step('six more uploads (toFile over a stream)', async () => {
		for (let i = 0; i < 6; i++) {
			const f = testFile(`${alias}-more-${i}.dat`, 100 + i);
			const obj = await client.files.create({
			    file: await mod.toFile(
			    fs.createReadStream(f.path), `more-${i}.dat`),
			    purpose: 'user_data' });
			uploaded.push({ obj, data: f.data });
			if (obj.bytes !== f.data.length)
				throw new Error(`file ${i}: ${obj.bytes} bytes`);
		}
	});
}

async function listing() {
	const want = uploaded.map((u) => u.obj.id).sort();
	await t.step('for await over files.list({limit: 2}) sees every ' +
	    'upload once, newest first', async () => {
		const seen = [];
		for await (const f of client.files.list({ limit: 2 }))
			seen.push(f);
		const ids = seen.map((f) => f.id);
		t.ok(JSON.stringify([...ids].sort()) === JSON.stringify(want),
		    'auto-pagination returns exactly the uploaded ids',
		    `got ${ids.length}: ${ids}\nwant ${want.length}: ${want}`);
		return t.ok(newestFirst(ids), 'the items come newest first',
		    `got ${ids}`);
	});
	await t.step('the listing takes at least 4 pages of at most 2',
	    async () => {
		let pages = 0, items = 0, big = 0;
		const first = await client.files.list({ limit: 2 });
		for await (const page of first.iterPages()) {
			pages++;
			items += page.data.length;
			if (page.data.length > 2)
				big++;
		}
		t.ok(big === 0, 'no page is over the limit', big);
		return pages >= 4 && items === want.length;
	});
	await t.step('order asc with limit 3 is the reverse of desc',
	    async () => {
		const asc = [], desc = [];
		for await (const f of client.files.list({ limit: 3,
		    order: 'asc' }))
			asc.push(f.id);
		for await (const f of client.files.list({ limit: 3 }))
			desc.push(f.id);
		return asc.length === want.length &&
		    JSON.stringify(asc) === JSON.stringify(desc.reverse());
	});
	await t.step('purpose filter', async () => {
		const got = [];
		for await (const f of client.files.list({
		    purpose: 'assistants', limit: 2 }))
			got.push(f.id);
		return got.length === 1 && got[0] === uploaded[1].obj.id;
	});
}

async function retrieveAndDownload() {
	for (const [i, label] of [[0, 'stream'], [1, 'buffer']]) {
		const { obj, data } = uploaded[i];
		await t.step(`retrieve the ${label} upload`, async () => {
			const got = await client.files.retrieve(obj.id);
			return t.ok(sameObject(got, obj),
			    `retrieve: same object as the upload (${label})`,
			    `${JSON.stringify(got)}\n${JSON.stringify(obj)}`);
		});
		await t.step(`files.content of the ${label} upload returns ` +
		    'its bytes', async () => {
			const r = await client.files.content(obj.id);
			const bytes = await bodyBytes(r);
			return Buffer.compare(bytes, data) === 0;
		});
	}
	await t.step('admin key acting for the user (query user=) ' +
	    'retrieves the file', async () => {
		const admin = new OpenAI({ baseURL, apiKey: env.adminKey });
		const got = await admin.files.retrieve(uploaded[0].obj.id,
		    { query: { user: process.env.DEPOT_USER } });
		return sameObject(got, uploaded[0].obj);
	});
}

async function errors() {
	const victim = uploaded[uploaded.length - 1].obj;
	await t.step('delete', async () => {
		const d = await client.files.delete(victim.id);
		return d.id === victim.id && d.deleted === true &&
		    d.object === 'file';
	});
	const route = `/v1/files/${victim.id}`;
	const nf = await expectError(t, 'retrieve of a deleted file',
	    () => client.files.retrieve(victim.id), mod.NotFoundError, 404,
	    () => serverError('GET', route, bearer));
	if (nf)
		t.ok(nf.err.type === 'not_found_error',
		    'NotFoundError.type is not_found_error', nf.err.type);
	await expectError(t, 'second delete',
	    () => client.files.delete(victim.id), mod.NotFoundError, 404,
	    () => serverError('DELETE', route, bearer));
	await expectError(t, 'content of a deleted file',
	    async () => bodyBytes(await client.files.content(victim.id)),
	    mod.NotFoundError, 404,
	    () => serverError('GET', route + '/content', bearer));
	await t.step('the deleted file is gone from the listing', async () => {
		for await (const f of client.files.list({ limit: 2 }))
			if (f.id === victim.id)
				return false;
		return true;
	});

	const badKey = 'dpt-' + 'ab'.repeat(20);
	const bad = new OpenAI({ baseURL, apiKey: badKey });
	const auth = await expectError(t, 'a bad key',
	    () => bad.files.list({ limit: 2 }), mod.AuthenticationError, 401,
	    () => serverError('GET', '/v1/files?limit=2',
	    { Authorization: `Bearer ${badKey}` }));
	if (auth)
		t.ok(auth.err.type === 'authentication_error',
		    'AuthenticationError.type is authentication_error',
		    auth.err.type);

	// The request option "query" adds ?user=other to the SDK's own call.
	const id = uploaded[0].obj.id;
	await expectError(t, 'a normal key naming another user',
	    () => client.files.retrieve(id, { query: { user: 'other' } }),
	    mod.PermissionDeniedError, 403,
	    () => serverError('GET', `/v1/files/${id}?user=other`, bearer));
	const admin = new OpenAI({ baseURL, apiKey: env.adminKey });
	await expectError(t, 'the admin key naming no user',
	    () => admin.files.retrieve(id), mod.BadRequestError, 400,
	    () => serverError('GET', `/v1/files/${id}`,
	    { Authorization: `Bearer ${env.adminKey}` }));
	await expectError(t, 'limit=0',
	    () => client.files.list({ limit: 0 }), mod.BadRequestError, 400,
	    () => serverError('GET', '/v1/files?limit=0', bearer));
}

// Over the part size of the S3 store (5M in suite.sh), streamed.
async function bigFiles() {
	const big = testFile(`${alias}-big.bin`, 6 * 1024 * 1024 + 17);
	await t.step('a 6 MiB stream upload comes back byte for byte',
	    async () => {
		const obj = await client.files.create({
		    file: fs.createReadStream(big.path),
		    purpose: 'user_data' });
		const r = await client.files.content(obj.id);
		const same = Buffer.compare(await bodyBytes(r), big.data) === 0;
		await client.files.delete(obj.id);
		return t.ok(obj.bytes === big.data.length && same,
		    'big upload: bytes and contents', obj.bytes);
	});
	// suite.sh sets max-size 16M.
	const huge = testFile(`${alias}-huge.bin`, 17 * 1024 * 1024);
	const res = await expectError(t, 'a stream upload over max-size',
	    () => client.files.create({
	    file: fs.createReadStream(huge.path), purpose: 'user_data' }),
	    mod.APIError, 413, async () => {
		// The same upload, raw: a plain 413 whose message names
		// the limit (and the size seen, which differs by framing).
		const form = new FormData();
		form.append('file', new Blob([huge.data]), 'huge.bin');
		const r = await fetch(env.url + '/v1/files',
		    { method: 'POST', headers: bearer, body: form });
		const body = await r.json();
		return { status: r.status, type: body.error?.type,
		    pattern: /larger than the configured maximum/ };
	});
	if (res)
		t.ok(res.err.type === 'invalid_request_error' &&
		    res.err.code === 'file_too_large',
		    '413: type invalid_request_error, code file_too_large',
		    `${res.err.type} ${res.err.code}`);
}

// What the SDK sends, as SPEC.md 4.2 describes it.
async function wire() {
	const proxy = await recordingProxy();
	const via = new OpenAI({ baseURL: proxy.url + '/v1',
	    apiKey: env.key });
	try {
		const f = testFile(`${alias}-wire.txt`, 1000);
		const obj = await via.files.create({
		    file: fs.createReadStream(f.path), purpose: 'user_data' });
		const up = proxy.seen[proxy.seen.length - 1];
		t.ok(up.method === 'POST' &&
		    up.headers['transfer-encoding'] === 'chunked' &&
		    up.headers['content-length'] === undefined,
		    'wire: a stream upload is sent chunked',
		    JSON.stringify(up.headers));
		t.ok(proxy.seen.every((r) => r.headers.authorization ===
		    `Bearer ${env.key}`),
		    'wire: Authorization: Bearer on every request');
		await bodyBytes(await via.files.content(obj.id));
		const dl = proxy.seen[proxy.seen.length - 1];
		t.ok(dl.headers.accept === 'application/binary',
		    'wire: download asks for Accept: application/binary',
		    dl.headers.accept);
		await via.files.delete(obj.id);
		const from = proxy.seen.length;
		const first = await via.files.list({ limit: 2 });
		for await (const _ of via.files.list({ limit: 2 }))
			;
		const pages = proxy.seen.slice(from + 1).map((r) =>
		    new URL(r.url, proxy.url).searchParams);
		t.ok(pages.length >= 2 && pages[1].get('after') ===
		    first.data[first.data.length - 1].id &&
		    pages[1].get('limit') === '2',
		    'wire: the next page is asked with after=<last id>',
		    proxy.seen.slice(from).map((r) => r.url).join(' '));
	} catch (e) {
		t.ok(false, 'wire: requests through a recording proxy', e.stack);
	} finally {
		await proxy.close();
	}
}

await uploads();
await bigFiles();
await wire();
if (t.ok(uploaded.length >= 7, 'at least 7 files uploaded',
    uploaded.length)) {
	await listing();
	await retrieveAndDownload();
	await errors();
}
process.exit(failed() ? 1 : 0);
