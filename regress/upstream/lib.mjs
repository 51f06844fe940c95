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

// regress/upstream/lib.mjs: what the double's SDK checks share: the
// SDK under its install alias, the double's control routes, one
// "ok"/"not ok" line per check, and the fault checks every dialect
// runs the same way.

import { loadSdk as load, need, reporter, failed } from
    '../harness/sdk.mjs';

export const url = need('UPSTREAM_URL');
export const key = process.env.UPSTREAM_KEY || 'test-upstream-key';
const modules = need('SDK_MODULES');

export const loadSdk = (alias) => load(modules, alias);
export { reporter };

export function done() {
	process.exit(failed() ? 1 : 0);
}

async function control(route, body) {
	const r = await fetch(url + route, { method: 'POST',
	    body: JSON.stringify(body ?? {}) });
	if (r.status !== 204)
		throw new Error(`${route}: ${r.status} ${await r.text()}`);
}

export const script = (...turns) => control('/__script', { turns });
export const reset = () => control('/__reset');

// t.step, each from an empty queue: a failed check's unused turns
// must not answer the next one.
export function isolated(t) {
	return async (what, fn) => {
		await reset();
		return t.step(what, fn);
	};
}

export async function log() {
	const r = await fetch(url + '/__log');
	return (await r.json()).requests;
}

export async function lastLogged() {
	const all = await log();
	return all[all.length - 1];
}

export const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

// Expects fn to throw an instance of cls (a class of the SDK under
// test); with a status, the error must carry it too.
export async function expectThrow(t, what, fn, cls, status) {
	let err = null;
	try {
		await fn();
	} catch (e) {
		err = e;
	}
	const name = cls ? cls.name : 'an error';
	t.ok(err !== null && (!cls || err instanceof cls) &&
	    (status === undefined || err.status === status),
	    `${what} raises ${name}${status ? ' ' + status : ''}`,
	    err ? `got ${err.constructor.name} ${err.status}: ${err.message}` :
	    'no error');
	return err;
}

// The double saw the client go: the stalled request's log entry says
// so within a few seconds (the machine may be busy).
async function stalled(t, what) {
	let e;
	for (let i = 0; i < 50; i++) {
		await sleep(100);
		e = await lastLogged();
		if (e?.client_closed)
			break;
	}
	t.ok(e?.client_closed === true && e.ended - e.started < 5,
	    `${what}: the log sees the client close`, JSON.stringify(e));
}

// The same checks for every dialect: each fault kind through the SDK.
// call(fault-free options) makes one plain request, stream() one
// streamed request, and both give the text they read.
export async function faults(t, sdk, call, stream, dialect) {
	const E = sdk.mod;
	const fresh = async (...turns) => {
		await reset();
		await script(...turns);
	};
	const statuses = [[400, E.BadRequestError],
	    [401, E.AuthenticationError], [429, E.RateLimitError],
	    [500, E.InternalServerError]];
	for (const [status, cls] of statuses) {
		await fresh({ fault: { kind: 'status', status,
		    message: `scripted ${status}`, retry_after: '7' } });
		const err = await expectThrow(t, `${dialect}: fault status ` +
		    status, () => call({}), cls, status);
		t.ok(err && JSON.stringify(err.error ?? '').includes(
		    `scripted ${status}`) &&
		    err.headers?.get?.('retry-after') === '7',
		    `${dialect}: status ${status} carries the message and ` +
		    'retry-after', err && JSON.stringify(err.error));
	}
	for (const s of [false, true]) {
		const how = s ? 'stream' : 'plain';
		const fn = s ? stream : call;
		await fresh({ fault: { kind: 'garbage' } });
		await expectThrow(t, `${dialect}: garbage ${how}`,
		    () => fn({}));
		await fresh({ fault: { kind: 'sse_error', message: 'mid' } });
		const mid = await expectThrow(t, `${dialect}: sse_error ${how}`,
		    () => fn({}), s ? undefined : E.InternalServerError);
		t.ok((mid?.message ?? '').includes('mid'), `${dialect}: ` +
		    `sse_error ${how} carries the message`,
		    mid && `${mid.message} ${JSON.stringify(mid.error)}`);
		await fresh({ fault: { kind: 'reset', after: 'none' } });
		await expectThrow(t, `${dialect}: reset after none ${how}`,
		    () => fn({}), E.APIConnectionError);
		// Past the headers the SDKs pass on fetch's own error (which
		// node's fetch may name ECONNRESET or "other side closed").
		for (const after of ['headers', 'first']) {
			await fresh({ fault: { kind: 'reset', after } });
			const err = await expectThrow(t, `${dialect}: reset ` +
			    `after ${after} ${how}`, () => fn({}));
			t.ok(err instanceof E.APIConnectionError ||
			    ['ECONNRESET', 'UND_ERR_SOCKET'].includes(
			    err?.cause?.code), `${dialect}: reset after ` +
			    `${after} ${how} is a transport error`,
			    `${err?.constructor.name}: ${err?.message} ` +
			    `(cause ${err?.cause?.code})`);
		}
		await fresh({ fault: { kind: 'stall', after: 'none' } });
		await expectThrow(t, `${dialect}: stall after none ${how}`,
		    () => fn({ timeout: 700 }), E.APIConnectionTimeoutError);
		await stalled(t, `${dialect}: stall after none ${how}`);
		// The SDKs time the wait for the headers only: after them,
		// the caller's signal is what ends a stalled answer.
		for (const after of ['headers', 'first']) {
			await fresh({ text: 'never whole',
			    fault: { kind: 'stall', after } });
			const what = `${dialect}: stall after ${after} ${how}`;
			let got;
			try {
				got = await fn({
				    signal: AbortSignal.timeout(700) });
			} catch (e) {
				got = e;
			}
			t.ok(got !== 'never whole', `${what} does not ` +
			    'complete', got);
			await stalled(t, what);
		}
		for (const fault of [{ kind: 'drip', ms: 1 },
		    { kind: 'crlf' }]) {
			const text = 'drip ünïcode ✓ and 😀 split';
			await fresh({ text });
			const want = await fn({});
			await fresh({ text, fault });
			const got = await fn({});
			t.ok(got === want && want === text, `${dialect}: ` +
			    `${fault.kind} ${how} reads as the normal answer`,
			    `${JSON.stringify(got)} vs ` +
			    JSON.stringify(want));
		}
	}
}
