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

// regress/containers/containers.mjs: client.containers.* of the openai
// SDK named by argv[2] (openai = 7, openai6) against depotd: create
// with expires_after and memory_limit, retrieve, list paged by after,
// delete; another tenant's container a 404 as a missing one; the
// per-key cap (max-per-key 3 in the suite's depotd.conf) a 429.
// Leaves one container, named "keep", for the suite's expiry checks.

import { loadSdk, need, reporter, failed } from '../harness/sdk.mjs';

const alias = process.argv[2] || 'openai';
const { mod, name, version } = loadSdk(need('SDK_MODULES'), alias);
const OpenAI = mod.OpenAI ?? mod.default;
const t = reporter(`${name} ${version} containers`);
const baseURL = need('DEPOT_URL') + '/v1';
const client = new OpenAI({ baseURL, apiKey: need('DEPOT_KEY'),
    maxRetries: 0 });
const other = new OpenAI({ baseURL, apiKey: need('OTHER_KEY'),
    maxRetries: 0 });
const idPattern = /^cntr_[0-9a-f]{32}$/;

async function status(p) {
	try {
		await p;
		return 200;
	} catch (e) {
		return e?.status ?? String(e);
	}
}

const made = [];
await t.step('create with expires_after and memory_limit', async () => {
	const c = await client.containers.create({ name: 'keep',
	    expires_after: { anchor: 'last_active_at', minutes: 5 },
	    memory_limit: '4g' });
	made.push(c);
	return t.ok(idPattern.test(c.id) && c.object === 'container' &&
	    c.name === 'keep' && c.status === 'running' &&
	    Number.isInteger(c.created_at) &&
	    Math.abs(c.created_at - Date.now() / 1000) < 60 &&
	    c.expires_after?.anchor === 'last_active_at' &&
	    c.expires_after?.minutes === 5 && c.memory_limit === '4g' &&
	    Number.isInteger(c.last_active_at),
	    'the container object: id, object, name, status, created_at, ' +
	    'expires_after echoed, memory_limit, last_active_at',
	    JSON.stringify(c));
});
await t.step('create with the defaults', async () => {
	for (const n of ['two', 'three']) {
		const c = await client.containers.create({ name: n });
		made.push(c);
	}
	return t.ok(made[1].expires_after?.minutes === 20 &&
	    made[1].memory_limit === '1g', 'default policy: 20 minutes, 1g',
	    JSON.stringify(made[1]));
});
await t.step('retrieve', async () => {
	const c = await client.containers.retrieve(made[0].id);
	return t.ok(JSON.stringify(c) === JSON.stringify(made[0]),
	    'retrieve answers what create did', JSON.stringify(c));
});
await t.step('list, paged by limit and after', async () => {
	const page = await client.containers.list({ limit: 2 });
	t.ok(page.data.length === 2 && page.has_more === true,
	    'a page of 2 of 3, has_more', JSON.stringify(page.data));
	const ids = [];
	for await (const c of client.containers.list({ limit: 2 }))
		ids.push(c.id);
	const want = made.map((c) => c.id).reverse();
	t.ok(JSON.stringify(ids) === JSON.stringify(want),
	    'auto-paging walks all three, newest first', JSON.stringify(ids));
	const asc = await client.containers.list({ order: 'asc' });
	return t.ok(asc.data[0].id === made[0].id, 'order asc: oldest first');
});
await t.step('per-key cap', async () => {
	const s = await status(client.containers.create({ name: 'four' }));
	return t.ok(s === 429, 'a fourth live container is a 429', s);
});
await t.step('name bound', async () => {
	const s = await status(client.containers.create({
	    name: 'n'.repeat(256) }));
	return t.ok(s === 400, 'a 256-byte name (bound 255) is a 400', s);
});
await t.step('another tenant', async () => {
	const a = await status(other.containers.retrieve(made[0].id));
	const b = await status(other.containers.delete(made[0].id));
	const m = await status(client.containers.retrieve('cntr_' +
	    '0'.repeat(32)));
	const l = await other.containers.list();
	return t.ok(a === 404 && b === 404 && m === 404 &&
	    l.data.length === 0, 'another tenant\'s id is a 404 as a ' +
	    'missing one, and its listing is empty', `${a} ${b} ${m}`);
});
await t.step('delete', async () => {
	const r = await client.containers.delete(made[2].id);
	const s = await status(client.containers.retrieve(made[2].id));
	const again = await status(client.containers.delete(made[2].id));
	const page = await client.containers.list();
	return t.ok(s === 404 && again === 404 && page.data.length === 2,
	    'deleted: retrieve and a second delete are 404, the list ' +
	    'shorter', `${s} ${again} ${page.data.length}`);
});
await t.step('a freed slot under the cap', async () => {
	const c = await client.containers.create({ name: 'again' });
	made.push(c);
	await client.containers.delete(made[1].id);
	await client.containers.delete(c.id);
	return idPattern.test(c.id);
});
process.exit(failed() ? 1 : 0);
