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

// regress/sessions/sessions.mjs ALIAS: the SDK installed as ALIAS
// (openai, openai6: responses with code_interpreter; @anthropic-ai/sdk,
// anthropic0: messages with code_execution) running code in a named
// container through depotd: turn 2 reads the file and the Python
// variable turn 1 left; another tenant's container is the same 404 as
// a missing one; an expired one is refused; a container in use by one
// request is refused to a second (409) and free again after.

import { execFileSync } from 'node:child_process';
import { need, loadSdk, reporter, failed } from '../harness/sdk.mjs';
import { reset, script, log } from '../upstream/lib.mjs';

const env = { url: need('DEPOT_URL'), key: need('DEPOT_KEY'),
    other: need('OTHER_KEY'), modules: need('SDK_MODULES'),
    psql: need('PSQL') };
const alias = process.argv[2] || 'openai';
const { mod, name, version } = loadSdk(env.modules, alias);
const t = reporter(`${name} ${version} sessions`);
const anthropic = name.includes('anthropic');
const MODEL = anthropic ? 'm-anth' : 'm-chat';
const THINK_MS = 2500;

function sdk(key) {
	if (anthropic) {
		const Anthropic = mod.Anthropic ?? mod.default;
		return new Anthropic({ baseURL: env.url, apiKey: key,
		    maxRetries: 0, timeout: 60000 });
	}
	const OpenAI = mod.OpenAI ?? mod.default;
	return new OpenAI({ baseURL: env.url + '/v1', apiKey: key,
	    maxRetries: 0, timeout: 60000 });
}
const client = sdk(env.key);
const intruder = sdk(env.other);

// A container through the REST route (the Anthropic SDKs have none).
async function newContainer(name) {
	if (!anthropic)
		return (await client.containers.create({ name })).id;
	const r = await fetch(env.url + '/v1/containers', { method: 'POST',
	    headers: { authorization: `Bearer ${env.key}`,
	    'content-type': 'application/json' },
	    body: JSON.stringify({ name }) });
	return (await r.json()).id;
}

async function container(id) {
	const r = await fetch(env.url + '/v1/containers/' + id,
	    { headers: { authorization: `Bearer ${env.key}` } });
	return r.json();
}

// One request that runs code in container id, through c.
function ask(c, id, text) {
	if (anthropic)
		return c.beta.messages.create({ model: MODEL, max_tokens: 256,
		    container: id, tools: [{ type: 'code_execution_20250825',
		    name: 'code_execution' }],
		    messages: [{ role: 'user', content: text }] });
	return c.responses.create({ model: MODEL, tools: [{ type:
	    'code_interpreter', container: id }], input: text });
}

// The model's code, then its words (after think_ms, when asked).
const run = (code, think) => script({ tool_calls: [{ name:
    'code_execution', arguments: { code } }] }, { text: 'done',
    ...(think ? { think_ms: THINK_MS } : {}) });

// What the runs printed, as the upstream read it in the last round.
async function lastToolText() {
	const lg = (await log()).filter((q) => q.path.startsWith('/v1/'));
	return JSON.stringify(lg[lg.length - 1]?.body ?? {});
}

async function refusal(p) {
	try {
		await p;
		return { status: 200 };
	} catch (e) {
		return { status: e?.status, body: e?.error ?? e?.message };
	}
}

// The answer names the container it ran in, in the dialect's shape.
function named(m, what) {
	if (anthropic) {
		const c = m.container;
		const at = Date.parse(c?.expires_at ?? '');
		return t.ok(c?.id === id && at > Date.now() &&
		    at < Date.now() + 21 * 60000 && c.skills === null &&
		    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(c.expires_at),
		    `${what} carries container {id, expires_at (RFC 3339, ` +
		    'in the idle minutes), skills: null}', JSON.stringify(c));
	}
	const calls = (m.output ?? []).filter((o) => o.type ===
	    'code_interpreter_call');
	return t.ok(calls.length > 0 && calls.every((o) =>
	    o.container_id === id), `${what}'s code_interpreter_call ` +
	    'names the container (container_id)', JSON.stringify(calls));
}

// The same request, streamed: its events and the SDK's final answer.
async function askStreamed(c, id, text) {
	const events = [];
	let s;
	if (anthropic)
		s = c.beta.messages.stream({ model: MODEL, max_tokens: 256,
		    container: id, tools: [{ type: 'code_execution_20250825',
		    name: 'code_execution' }],
		    messages: [{ role: 'user', content: text }] });
	else
		s = c.responses.stream({ model: MODEL, tools: [{ type:
		    'code_interpreter', container: id }], input: text });
	for await (const ev of s)
		events.push(ev);
	const m = anthropic ? await s.finalMessage() :
	    await s.finalResponse();
	return { m, events };
}

const tag = Math.random().toString(36).slice(2, 10);
let id;

await t.step('a container to work in', async () => {
	id = await newContainer('work');
	return /^cntr_[0-9a-f]{32}$/.test(id);
});

await t.step('turn 1 writes a file and sets a variable in it',
    async () => {
	await reset();
	await run(`open('notes.txt', 'w').write('${tag}')\nx = 41\n` +
	    `print('wrote')`);
	const before = (await container(id)).last_active_at;
	await new Promise((r) => setTimeout(r, 1100));
	const m = await ask(client, id, 'Write the notes.');
	const after = (await container(id)).last_active_at;
	named(m, 'the answer');
	return t.ok(after > before, 'the request made the container ' +
	    `active (last_active_at ${before} -> ${after})`) &&
	    (await lastToolText()).includes('wrote');
});

await t.step('turn 2 reads the file and the variable turn 1 left',
    async () => {
	await reset();
	await run(`print(open('notes.txt').read(), x + 1)`);
	await ask(client, id, 'Read the notes back.');
	const seen = await lastToolText();
	return t.ok(seen.includes(`${tag} 42`), 'the run printed the ' +
	    `file's text and x + 1 ("${tag} 42")`, seen.slice(0, 600));
});

await t.step('a streamed turn 3 in it, and the stream names it',
    async () => {
	await reset();
	await run(`print('x is', x)`);
	const { m, events } = await askStreamed(client, id, 'And x?');
	if (anthropic) {
		const d = events.find((e) => e.type === 'message_delta');
		t.ok(d?.delta?.container?.id === id, 'message_delta.delta.' +
		    'container names the container', JSON.stringify(d));
	}
	named(m, "the stream's final answer");
	return (await lastToolText()).includes('x is 41');
});

await t.step('a request without a container starts afresh', async () => {
	await reset();
	await run(`import os\nprint('notes' , os.path.exists('notes.txt'))`);
	if (anthropic)
		await client.beta.messages.create({ model: MODEL,
		    max_tokens: 256, tools: [{ type:
		    'code_execution_20250825', name: 'code_execution' }],
		    messages: [{ role: 'user', content: 'Look.' }] });
	else
		await client.responses.create({ model: MODEL, tools: [{
		    type: 'code_interpreter', container: { type: 'auto' } }],
		    input: 'Look.' });
	return (await lastToolText()).includes('notes False');
});

await t.step("another tenant's container is the 404 of a missing one",
    async () => {
	await reset();
	const theirs = await refusal(ask(intruder, id, 'Read theirs.'));
	const none = await refusal(ask(intruder,
	    'cntr_' + '0'.repeat(32), 'Read none.'));
	const lg = (await log()).filter((q) => q.path.startsWith('/v1/'));
	return t.ok(theirs.status === 404 && none.status === 404 &&
	    JSON.stringify(theirs.body) === JSON.stringify(none.body) &&
	    lg.length === 0, 'both 404, the same body, and the upstream ' +
	    'never asked', JSON.stringify([theirs, none, lg.length]));
});

await t.step('an expired container is refused', async () => {
	execFileSync(env.psql, ['-X', '-Atq', '-d', 'depot', '-c',
	    `update containers set last_active_at = now() - interval ` +
	    `'21 minutes' where id = '${id}'`]);
	const r = await refusal(ask(client, id, 'Again.'));
	const msg = anthropic ? r.body?.error?.message : r.body?.message;
	return t.ok(r.status === 400 && /expired/.test(msg ?? ''),
	    `400 saying it expired (${r.status}: ${msg})`,
	    JSON.stringify(r));
});

await t.step('a container in use is refused to a second request (409)',
    async () => {
	const busy = await newContainer('busy');
	await reset();
	await run('print(1)', true);
	const first = ask(client, busy, 'Take a while.');
	// The first holds it while the double thinks over its round 2.
	for (let i = 0; i < 50 && (await log()).filter((q) =>
	    q.path.startsWith('/v1/')).length < 2; i++)
		await new Promise((r) => setTimeout(r, 100));
	const second = await refusal(ask(client, busy, 'Me too.'));
	const firstDone = await refusal(first);
	await reset();
	await run('print(2)');
	const third = await refusal(ask(client, busy, 'Now me.'));
	const type = anthropic ? second.body?.error?.type :
	    second.body?.type;
	return t.ok(second.status === 409 && firstDone.status === 200 &&
	    third.status === 200, 'the second 409 (' + type + '), the ' +
	    'first answered, and a third after it runs',
	    JSON.stringify([second, firstDone, third]));
});

process.exit(failed() ? 1 : 0);
