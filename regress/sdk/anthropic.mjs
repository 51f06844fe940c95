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

// regress/sdk/anthropic.mjs ALIAS: the Anthropic SDK installed as ALIAS
// ("@anthropic-ai/sdk" 1.x, "anthropic0" 0.x) against depotd, through its
// public API only: the client gets baseURL and apiKey and nothing else.
// 1.x has the Files API at client.files (and still at client.beta.files);
// 0.x only at client.beta.files, which adds ?beta=true to every path.

import fs from 'node:fs';
import path from 'node:path';
import { env, loadSdk, reporter, failed, testFile, bodyBytes, idPattern,
    serverError, expectError, recordingProxy } from './common.mjs';

const alias = process.argv[2] || '@anthropic-ai/sdk';
const { mod, name, version } = loadSdk(alias);
const Anthropic = mod.Anthropic ?? mod.default;
const t = reporter(`${name} ${version}`);
const major = Number(version.split('.')[0]);
const baseURL = env.url;
const client = new Anthropic({ baseURL, apiKey: env.key });
const files = major >= 1 ? client.files : client.beta.files;
// The wire as each generation sends it (SPEC.md 4.2), for raw requests.
const qual = major >= 1 ? '' : '?beta=true';
const rawHeaders = (key) => major >= 1 ?
    { Authorization: `Bearer ${key}`, 'anthropic-version': '2023-06-01' } :
    { 'x-api-key': key, 'anthropic-version': '2023-06-01' };
const mine = rawHeaders(env.key);
const rfc3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

const uploaded = [];	// { obj, data }

function sameMetadata(a, b) {
	return a.id === b.id && a.type === 'file' && b.type === 'file' &&
	    a.size_bytes === b.size_bytes && a.filename === b.filename &&
	    a.mime_type === b.mime_type && a.created_at === b.created_at &&
	    a.downloadable === true && b.downloadable === true;
}

// Newest first: the uploads ran one after another, so the default
// (desc) order is the reverse of the upload order.
function newestFirst(ids) {
	const want = uploaded.map((u) => u.obj.id).reverse();
	return JSON.stringify(ids) === JSON.stringify(want);
}

async function uploads() {
	const stream = testFile(`${major}-stream.txt`, 200 * 1024 + 11);
	await t.step('upload from fs.createReadStream', async () => {
		const obj = await files.upload({
		    file: fs.createReadStream(stream.path) });
		uploaded.push({ obj, data: stream.data });
		t.ok(idPattern.test(obj.id) && obj.type === 'file',
		    'stream upload: id is file- and 32 hex digits, type "file"',
		    JSON.stringify(obj));
		t.ok(obj.size_bytes === stream.data.length,
		    'stream upload: size_bytes is the file size',
		    obj.size_bytes);
		t.ok(obj.filename === path.basename(stream.path),
		    'stream upload: filename is the stream path\'s name',
		    obj.filename);
		t.ok(obj.mime_type === 'text/plain',
		    'stream upload: mime_type guessed from .txt', obj.mime_type);
		t.ok(rfc3339.test(obj.created_at),
		    'stream upload: created_at is RFC 3339 with microseconds',
		    obj.created_at);
		return obj.downloadable === true;
	});

	const buf = testFile(`${major}-buffer.json`, 2048 + 5);
	await t.step('upload from a Buffer with toFile and a type',
	    async () => {
		const obj = await files.upload({
		    file: await mod.toFile(buf.data, 'dir/data.json',
		    { type: 'application/json' }) });
		uploaded.push({ obj, data: buf.data });
		return t.ok(obj.size_bytes === buf.data.length &&
		    obj.mime_type === 'application/json',
		    'buffer upload: size_bytes and the given mime_type',
		    JSON.stringify(obj));
	});

	await t.step('six more uploads (toFile over a stream)', async () => {
		for (let i = 0; i < 6; i++) {
			const f = testFile(`${major}-more-${i}.dat`, 50 + i);
			const obj = await files.upload({
			    file: await mod.toFile(
			    fs.createReadStream(f.path), `more-${i}.dat`) });
			uploaded.push({ obj, data: f.data });
			if (obj.size_bytes !== f.data.length)
				throw new Error(`file ${i}: ${obj.size_bytes}`);
		}
	});
}

async function listing() {
	const want = uploaded.map((u) => u.obj.id).sort();
	await t.step('for await over files.list({limit: 2}) sees every ' +
	    'upload once, newest first', async () => {
		const seen = [];
		for await (const f of files.list({ limit: 2 }))
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
		const first = await files.list({ limit: 2 });
		for await (const page of first.iterPages()) {
			pages++;
			items += page.data.length;
			if (page.data.length > 2)
				big++;
		}
		t.ok(big === 0, 'no page is over the limit', big);
		return pages >= 4 && items === want.length;
	});
	// The SDK keeps only next_page; older clients follow has_more.
	await t.step('on the wire, next_page is set exactly when has_more',
	    async () => {
		const sep = qual ? '&' : '?';
		const get = async (q) => (await fetch(env.url + '/v1/files' +
		    qual + sep + q, { headers: mine })).json();
		const more = await get('limit=2');
		const all = await get('limit=1000');
		return more.has_more === true &&
		    typeof more.next_page === 'string' &&
		    more.next_page.length > 0 && all.has_more === false &&
		    all.next_page === null && all.data.length === want.length;
	});
	await t.step('a listing page by limit 3 matches the item order',
	    async () => {
		const a = [], b = [];
		for await (const f of files.list({ limit: 3 }))
			a.push(f.id);
		for await (const f of files.list({ limit: 1000 }))
			b.push(f.id);
		return a.length === want.length &&
		    JSON.stringify(a) === JSON.stringify(b);
	});
	if (major >= 1) {
		await t.step('files.list({ids}) restricts the page', async () => {
			const ids = [uploaded[0].obj.id, uploaded[2].obj.id];
			const got = [];
			for await (const f of files.list({ ids }))
				got.push(f.id);
			return JSON.stringify(got.sort()) ===
			    JSON.stringify([...ids].sort());
		});
		await t.step('client.beta.files lists and retrieves the same ' +
		    'files', async () => {
			const got = [];
			for await (const f of client.beta.files.list({
			    limit: 3 }))
				got.push(f.id);
			const m = await client.beta.files.retrieveMetadata(
			    uploaded[0].obj.id);
			return JSON.stringify(got.sort()) ===
			    JSON.stringify(want) &&
			    sameMetadata(m, uploaded[0].obj);
		});
	}
}

async function retrieveAndDownload() {
	for (const [i, label] of [[0, 'stream'], [1, 'buffer']]) {
		const { obj, data } = uploaded[i];
		await t.step(`retrieveMetadata of the ${label} upload`,
		    async () => {
			const got = await files.retrieveMetadata(obj.id);
			return t.ok(sameMetadata(got, obj),
			    `retrieveMetadata: same metadata as the upload ` +
			    `(${label})`,
			    `${JSON.stringify(got)}\n${JSON.stringify(obj)}`);
		});
		await t.step(`download of the ${label} upload returns its ` +
		    'bytes', async () => {
			const r = await files.download(obj.id);
			return Buffer.compare(await bodyBytes(r), data) === 0;
		});
	}
	await t.step('admin key acting for the user (query user=) ' +
	    'retrieves the metadata', async () => {
		const admin = new Anthropic({ baseURL, apiKey: env.adminKey });
		const af = major >= 1 ? admin.files : admin.beta.files;
		const got = await af.retrieveMetadata(uploaded[0].obj.id, {},
		    { query: { user: process.env.DEPOT_USER } });
		return sameMetadata(got, uploaded[0].obj);
	});
}

function errorTypeIs(res, type) {
	if (!res)
		return;
	t.ok(res.err.error?.type === 'error' &&
	    res.err.error?.error?.type === type,
	    `the body in the exception is {type:"error", error:{type:` +
	    `"${type}"}}`, JSON.stringify(res.err.error));
}

async function errors() {
	const victim = uploaded[uploaded.length - 1].obj;
	await t.step('delete', async () => {
		const d = await files.delete(victim.id);
		return d.id === victim.id && d.type === 'file_deleted';
	});
	const route = `/v1/files/${victim.id}`;
	errorTypeIs(await expectError(t, 'retrieveMetadata of a deleted file',
	    () => files.retrieveMetadata(victim.id), mod.NotFoundError, 404,
	    () => serverError('GET', route + qual, mine)), 'not_found_error');
	await expectError(t, 'second delete',
	    () => files.delete(victim.id), mod.NotFoundError, 404,
	    () => serverError('DELETE', route + qual, mine));
	await expectError(t, 'download of a deleted file',
	    async () => bodyBytes(await files.download(victim.id)),
	    mod.NotFoundError, 404,
	    () => serverError('GET', route + '/content' + qual, mine));
	await t.step('the deleted file is gone from the listing', async () => {
		for await (const f of files.list({ limit: 2 }))
			if (f.id === victim.id)
				return false;
		return true;
	});

	const badKey = 'dpt-' + 'cd'.repeat(20);
	const bad = new Anthropic({ baseURL, apiKey: badKey });
	const bf = major >= 1 ? bad.files : bad.beta.files;
	errorTypeIs(await expectError(t, 'a bad key',
	    () => bf.list({ limit: 2 }), mod.AuthenticationError, 401,
	    () => serverError('GET', '/v1/files' + (qual || '?') +
	    (qual ? '&' : '') + 'limit=2', rawHeaders(badKey))),
	    'authentication_error');

	// The request option "query" adds user=other to the SDK's own call.
	const id = uploaded[0].obj.id;
	errorTypeIs(await expectError(t, 'a normal key naming another user',
	    () => files.retrieveMetadata(id, {}, { query: { user: 'other' } }),
	    mod.PermissionDeniedError, 403,
	    () => serverError('GET', `/v1/files/${id}?user=other`, mine)),
	    'permission_error');
	await expectError(t, 'limit=0',
	    () => files.list({ limit: 0 }), mod.BadRequestError, 400,
	    () => serverError('GET', '/v1/files?limit=0', mine));
}

// Over the part size of the S3 store (5M in suite.sh), streamed.
async function bigFiles() {
	const big = testFile(`${major}-big.bin`, 6 * 1024 * 1024 + 19);
	await t.step('a 6 MiB stream upload comes back byte for byte',
	    async () => {
		const obj = await files.upload({
		    file: fs.createReadStream(big.path) });
		const r = await files.download(obj.id);
		const same = Buffer.compare(await bodyBytes(r), big.data) === 0;
		await files.delete(obj.id);
		return t.ok(obj.size_bytes === big.data.length && same,
		    'big upload: size_bytes and contents', obj.size_bytes);
	});
	// suite.sh sets max-size 16M.
	const huge = testFile(`${major}-huge.bin`, 17 * 1024 * 1024);
	const res = await expectError(t, 'a stream upload over max-size',
	    () => files.upload({ file: fs.createReadStream(huge.path) }),
	    mod.APIError, 413, async () => {
		// The same upload, raw: a plain 413 whose message names
		// the limit (and the size seen, which differs by framing).
		const form = new FormData();
		form.append('file', new Blob([huge.data]), 'huge.bin');
		const r = await fetch(env.url + '/v1/files' + qual,
		    { method: 'POST', headers: mine, body: form });
		const body = await r.json();
		return { status: r.status, type: body.error?.type,
		    pattern: /larger than the configured maximum/ };
	});
	errorTypeIs(res, 'request_too_large');
}

// What the SDK sends, as SPEC.md 4.2 describes it: 1.x Bearer and
// anthropic-version without anthropic-beta, paging by page=; 0.x
// x-api-key, anthropic-version 2023-06-01 and ?beta=true everywhere.
async function wire() {
	const proxy = await recordingProxy();
	const via = new Anthropic({ baseURL: proxy.url, apiKey: env.key });
	const vf = major >= 1 ? via.files : via.beta.files;
	try {
		const f = testFile(`${major}-wire.txt`, 1000);
		const obj = await vf.upload({
		    file: fs.createReadStream(f.path) });
		await bodyBytes(await vf.download(obj.id));
		const dl = proxy.seen[proxy.seen.length - 1];
		t.ok(dl.headers.accept === 'application/binary',
		    'wire: download asks for Accept: application/binary',
		    dl.headers.accept);
		await vf.delete(obj.id);
		const from = proxy.seen.length;
		for await (const _ of vf.list({ limit: 2 }))
			;
		const all = proxy.seen;
		const h = (r) => r.headers;
		if (major >= 1) {
			t.ok(all.every((r) => h(r).authorization ===
			    `Bearer ${env.key}` && !h(r)['x-api-key']),
			    'wire: Authorization: Bearer, no x-api-key');
			t.ok(all.every((r) => h(r)['anthropic-version'] &&
			    h(r)['anthropic-beta'] === undefined),
			    'wire: anthropic-version and no anthropic-beta',
			    JSON.stringify(h(all[0])));
		} else {
			t.ok(all.every((r) => h(r)['x-api-key'] === env.key),
			    'wire: x-api-key on every request');
			t.ok(all.every((r) => h(r)['anthropic-version'] ===
			    '2023-06-01' && /[?&]beta=true(&|$)/.test(r.url)),
			    'wire: anthropic-version 2023-06-01 and ?beta=true',
			    all.map((r) => r.url).join(' '));
		}
		const second = all[from + 1] ?
		    new URL(all[from + 1].url, proxy.url).searchParams : null;
		t.ok(second !== null && second.get('page') !== null &&
		    second.get('limit') === '2',
		    'wire: the next page is asked with page=<next_page>',
		    all.slice(from).map((r) => r.url).join(' '));
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
