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

// regress/sdk/common.mjs: what the SDK checks share: the environment
// suite.sh sets, one "ok"/"not ok" line per check, test files, and the
// raw requests that tell us what the server itself answered.

import { loadSdk as load, need, reporter, failed } from
    '../harness/sdk.mjs';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export const env = {
	url: need('DEPOT_URL'),
	key: need('DEPOT_KEY'),
	adminKey: need('DEPOT_ADMIN_KEY'),
	modules: need('SDK_MODULES'),
	tmp: need('SDK_TMP'),
};

// The package under its install name (an npm alias for older majors).
export const loadSdk = (alias) => load(env.modules, alias);
export { reporter, failed };

// Random contents, so that a byte comparison cannot pass by accident.
export function testFile(name, size) {
	const p = path.join(env.tmp, name);
	const data = randomBytes(size);
	fs.writeFileSync(p, data);
	return { path: p, data };
}

export async function bodyBytes(response) {
	return Buffer.from(await response.arrayBuffer());
}

export const idPattern = /^file-[0-9a-f]{32}$/;

// The error message depotd sends for a request, read without any SDK,
// to compare with what the SDK's exception carries.
export async function serverError(method, route, headers) {
	const r = await fetch(env.url + route, { method, headers });
	const text = await r.text();
	let body;
	try {
		body = JSON.parse(text);
	} catch {
		return { status: r.status, message: null, type: null, text };
	}
	const inner = body.error || {};
	return { status: r.status, message: inner.message ?? null,
	    type: inner.type ?? null, body };
}

// Expects fn to throw cls with the given status, carrying the server's
// own message (fetched raw with the same credentials and dialect).
export async function expectError(t, what, fn, cls, status, raw) {
	let err = null;
	try {
		await fn();
	} catch (e) {
		err = e;
	}
	if (!t.ok(err instanceof cls, `${what} raises ${cls.name}`,
	    err ? `got ${err.constructor.name}: ${err.message}` : 'no error'))
		return null;
	t.ok(err.status === status, `${what}: status ${status}`,
	    `got ${err.status}`);
	const server = await raw();
	// OpenAI keeps the inner error object, Anthropic the whole body.
	const sdkMessage = err.error?.error?.message ?? err.error?.message;
	// A message that names the request's own sizes cannot be fetched
	// again: raw() then gives the pattern it must match.
	if (server.pattern)
		server.message = server.pattern.test(sdkMessage ?? '') ?
		    sdkMessage : `(matching ${server.pattern})`;
	t.ok(server.status === status && typeof server.message === 'string' &&
	    server.message.length > 0 && sdkMessage === server.message &&
	    (err.message.includes(server.message) ||
	    err.message.includes(JSON.stringify(server.message).slice(1, -1))),
	    `${what}: the exception carries the server's message`,
	    `exception "${err.message}", server ${server.status} ` +
	    `"${server.message}"`);
	t.ok(typeof err.requestID === 'string' && err.requestID.length > 0,
	    `${what}: the exception names the request id`, err.requestID);
	return { err, server };
}

// A pass-through HTTP proxy in front of depotd that records each
// request's method, URL and headers, to check what an SDK really sends
// (SPEC.md 4.2).  The SDK only sees another baseURL.
export async function recordingProxy() {
	const http = await import('node:http');
	const upstream = new URL(env.url);
	const seen = [];
	const server = http.createServer((req, res) => {
		seen.push({ method: req.method, url: req.url,
		    headers: { ...req.headers } });
		const out = http.request({ host: upstream.hostname,
		    port: upstream.port, method: req.method, path: req.url,
		    headers: req.headers }, (up) => {
			res.writeHead(up.statusCode, up.headers);
			up.pipe(res);
		});
		out.on('error', () => res.destroy());
		req.pipe(out);
	});
	await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
	return {
		url: `http://127.0.0.1:${server.address().port}`,
		seen,
		close: () => new Promise((ok) => {
			server.closeAllConnections?.();
			server.close(ok);
		}),
	};
}
