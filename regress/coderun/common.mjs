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

// regress/coderun/common.mjs: what the code-execution checks share:
// the double's model requests, the CSV and the Python that charts it,
// the Files API in both dialects over plain HTTP, and the checks that
// are the same in every dialect.  Each SDK script (openai.mjs for
// chat.completions and responses, anthropic.mjs for messages) gives an
// adapter per route:
//
//	route, mod (the SDK: error classes), stopText, stopTool
//	parts: {text(s), file(id)}: the content parts of its dialect
//	codeTool, ownTool: the gateway's declaration, a function tool
//	upload(name, bytes, type) -> file id
//	ask({model, stream, content, tools}) -> {text, calls:
//	    [{id, name, args}], stop, events}; streamed through the SDK's
//	    stream helper and its final-message method
//	shown(events): a streamed event that shows a gateway tool call
//	own: {meta(id), bytes(id)}: the Files API through the SDK
//	native (Messages and Responses only): the provider's own tool:
//	    tool, its declaration; read(blocks) -> {runs: [{code, stdout,
//	    files}], order: [block or item types]}; order, the types
//	    expected for one run; streamed(events): the stream carried the
//	    run's blocks; shown(events): it showed a function call

import { randomBytes } from 'node:crypto';

import { loadSdk as load, need, objects } from '../harness/sdk.mjs';
import { reset, script, log } from '../upstream/lib.mjs';

export { reporter, failed } from '../harness/sdk.mjs';

export const env = {
	url: need('DEPOT_URL'),
	key: need('DEPOT_KEY'),
	otherKey: need('OTHER_KEY'),
	upstream: need('UPSTREAM_URL'),
	modules: need('SDK_MODULES'),
	iterations: Number(process.env.CODERUN_ITERATIONS || 3),
};

// The two models of suite.sh: one per upstream api.
export const MODELS = ['m-chat', 'm-anth'];
export const BETAS = ['files-api-2025-04-14'];
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const fileLine = /chart\.png \(file_id: (file-[0-9A-Za-z_-]+)\)/;

export function loadSdk(alias) {
	return load(env.modules, alias);
}

export const rand = () => randomBytes(4).toString('hex');

// The double's control routes (regress/upstream/lib.mjs); the log
// holds only model requests.
export const dbl = {
	reset,
	script,
	log: async () => (await log()).filter((q) =>
	    q.path.startsWith('/v1/')),
};

// A CSV of a few months' sales, the total the code must print, and
// the code: it reads the seeded file by its name and charts it.
export function dataset() {
	const tag = rand();
	const name = `sales-${tag}.csv`;
	const months = ['jan', 'feb', 'mar', 'apr', 'may'];
	const ys = months.map(() => 10 + randomBytes(1)[0]);
	const csv = 'month,sales\n' + months.map((m, i) =>
	    `${m},${ys[i]}`).join('\n') + '\n';
	const stdout = `${tag} total ${ys.reduce((a, b) => a + b, 0)}`;
	const code = [
		'import csv, os, tempfile',
		'os.environ["MPLCONFIGDIR"] = tempfile.mkdtemp()',
		'import matplotlib',
		'matplotlib.use("Agg")',
		'import matplotlib.pyplot as plt',
		`with open(${JSON.stringify(name)}) as f:`,
		'    rows = list(csv.DictReader(f))',
		'ys = [int(r["sales"]) for r in rows]',
		'plt.bar([r["month"] for r in rows], ys)',
		'plt.savefig("chart.png")',
		`print(${JSON.stringify(tag)}, "total", sum(ys))`,
	].join('\n');
	return { name, csv: Buffer.from(csv), stdout, code };
}

// The Files API over plain HTTP, in either dialect.
function headers(dialect, key) {
	return dialect === 'anthropic' ? { 'x-api-key': key,
	    'anthropic-version': '2023-06-01',
	    'anthropic-beta': BETAS.join(',') } :
	    { authorization: `Bearer ${key}` };
}

export async function rawMeta(dialect, key, id) {
	const r = await fetch(`${env.url}/v1/files/${id}`,
	    { headers: headers(dialect, key) });
	return { status: r.status, body: await r.json().catch(() => null) };
}

export async function rawBytes(dialect, key, id) {
	const r = await fetch(`${env.url}/v1/files/${id}/content`,
	    { headers: headers(dialect, key) });
	return { status: r.status, bytes: Buffer.from(await r.arrayBuffer()) };
}

export const isPng = (b) => b && b.length > 8 &&
    Buffer.compare(b.subarray(0, 8), PNG) === 0;

// Runs each [name, fn] part (with CODERUN_PARTS="a,b", only those
// whose name contains a or b); an exception fails that part only.
// A part's own checks say what passed: its end is no check.
export async function run(t, parts) {
	const only = process.env.CODERUN_PARTS?.split(',');
	for (const [name, fn] of parts) {
		if (only && !only.some((o) => name.includes(o)))
			continue;
		try {
			await fn();
		} catch (e) {
			t.ok(false, `${name} ran to its end`, e?.stack ?? e);
		}
	}
}

// What the upstream saw: the gateway's tool in the upstream's shape,
// the caller's declaration never.
function toolsSeen(t, label, log) {
	const first = log[0]?.body ?? {};
	const fn = objects(first.tools ?? [], (o) =>
	    o.name === 'code_execution' &&
	    JSON.stringify(o.parameters ?? o.input_schema ?? {})
	    .includes('"code"'));
	t.ok(fn.length === 1, `${label}: the upstream sees the function ` +
	    'tool code_execution(code)', JSON.stringify(first.tools));
	t.ok(log.length > 0 && log.every((q) => !JSON.stringify(q.body)
	    .includes('otari_code_execution')), `${label}: ` +
	    'otari_code_execution never reaches the upstream',
	    JSON.stringify(log.map((q) => q.body?.tools)));
}

// Upload the CSV, script one code round and the answer, ask with the
// given tool declaration: the SDK's answer must come back whole.
async function askForChart(t, a, model, stream, tool, label) {
	const d = dataset();
	const csvId = await a.upload(d.name, d.csv, 'text/csv');
	await dbl.reset();
	await dbl.script({ tool_calls: [{ name: 'code_execution',
	    arguments: { code: d.code } }] },
	    { text: 'Here is your chart. {{last_tool_result}}' });
	let r, err;
	try {
		r = await a.ask({ model, stream, tools: [tool],
		    content: [a.parts.text('Chart the sales in this file.'),
		    a.parts.file(csvId)] });
	} catch (e) {
		err = e;
	}
	t.ok(r && r.stop === a.stopText, `${label}: the SDK gets an ` +
	    `answer, stop ${a.stopText}` + (stream ? ', through the ' +
	    'stream helper and its final message' : ''),
	    err ? `${err.constructor.name} ${err.status}: ${err.message}` :
	    `stop ${r?.stop}: ${r?.text}`);
	return { d, r };
}

// The whole run: upload, ask, the tool round, the answer, the file.
export async function chartCheck(t, a, model, stream) {
	const label = `${a.route} ${model} ${stream ? 'stream' : 'plain'}`;
	const { d, r } = await askForChart(t, a, model, stream, a.codeTool,
	    label);
	const m = r?.text?.match(fileLine);
	t.ok(m !== null && m !== undefined, `${label}: the answer names ` +
	    '"chart.png (file_id: file-…)"', r?.text);
	const log = await dbl.log();
	t.ok(log.length === 2 && log.every((q) => q.status === 200),
	    `${label}: two upstream requests (the code, the answer)`,
	    JSON.stringify(log.map((q) => [q.path, q.status])));
	toolsSeen(t, label, log);
	// The tool result in the upstream's own shape: chat's role "tool",
	// Messages' tool_result block.
	const back = JSON.stringify(objects(log[1]?.body?.messages ?? [],
	    (o) => o.role === 'tool' || o.type === 'tool_result'));
	t.ok(back.includes(d.stdout) && fileLine.test(back),
	    `${label}: the tool result has the code's stdout and the ` +
	    'file line', back.slice(-800));
	if (stream)
		t.ok(r && !a.shown(r.events), `${label}: the stream shows ` +
		    'no gateway tool call', JSON.stringify(r?.events ?? null)
		    .slice(0, 800));
	if (m)
		await outputChecks(t, a, label, m[1]);
	return true;
}

// The file the run produced: a PNG in both dialects, the caller's
// alone.
async function outputChecks(t, a, label, id) {
	const own = await a.own.bytes(id);
	t.ok(isPng(own), `${label}: ${a.route === 'messages' ?
	    'beta.files.download' : 'files.content'} gives a PNG`,
	    own?.subarray(0, 16).toString('hex'));
	const meta = await a.own.meta(id);
	t.ok(a.route === 'messages' ? meta?.downloadable === true :
	    meta?.purpose === 'code_execution_output', `${label}: ` +
	    (a.route === 'messages' ? 'downloadable: true' :
	    'purpose code_execution_output'), JSON.stringify(meta));
	const other = a.route === 'messages' ? 'openai' : 'anthropic';
	const om = await rawMeta(other, env.key, id);
	const ob = await rawBytes(other, env.key, id);
	const good = other === 'openai' ?
	    om.body?.purpose === 'code_execution_output' :
	    om.body?.downloadable === true;
	t.ok(om.status === 200 && good && ob.status === 200 &&
	    isPng(ob.bytes), `${label}: the ${other} dialect of the Files ` +
	    'API has it too, as a PNG', `${om.status} ` +
	    `${JSON.stringify(om.body)} ${ob.status}`);
	const xm = await rawMeta('openai', env.otherKey, id);
	const xb = await rawBytes('anthropic', env.otherKey, id);
	t.ok(xm.status === 404 && xb.status === 404, `${label}: another ` +
	    'tenant\'s key gets 404 for it', `${xm.status} ${xb.status}`);
}

// A call to the caller's own tool comes back to the caller as it was.
export async function ownToolCheck(t, a, model, stream) {
	const label = `${a.route} ${model} ${stream ? 'stream' : 'plain'}` +
	    ' own tool';
	const city = `Paris-${rand()}`;
	const id = `toolu_own${rand()}`;
	await dbl.reset();
	await dbl.script({ tool_calls: [{ id, name: 'get_weather',
	    arguments: { city, days: [1, 2] } }] });
	const r = await a.ask({ model, stream, tools: [a.codeTool, a.ownTool],
	    content: [a.parts.text('The weather, please.')] });
	const c = r.calls[0];
	t.ok(r.calls.length === 1 && c.name === 'get_weather' &&
	    JSON.stringify(c.args) === JSON.stringify({ city,
	    days: [1, 2] }) && c.id === id && r.stop === a.stopTool,
	    `${label}: the call passes through to the caller as made ` +
	    `(id, name, arguments), stop ${a.stopTool}`,
	    JSON.stringify(r.calls) + ' ' + r.stop);
	if (stream)
		t.ok(!r.events.some((e) => JSON.stringify(e)
		    .includes('code_execution')), `${label}: the stream ` +
		    'names no code_execution', JSON.stringify(r.events)
		    .slice(0, 600));
	const log = await dbl.log();
	const tools = JSON.stringify(log[0]?.body?.tools ?? null);
	t.ok(log.length === 1 && tools.includes('get_weather') &&
	    tools.includes('code_execution') &&
	    !tools.includes('otari_code_execution'),
	    `${label}: one upstream request, with both tools`,
	    `${log.length} ${tools}`);
	return true;
}

// The model that never stops asking for code: an error in the
// caller's dialect after max-tool-iterations rounds.
export async function capCheck(t, a, model, stream) {
	const label = `${a.route} ${model} ${stream ? 'stream' : 'plain'}` +
	    ' iteration cap';
	const turns = [];
	for (let i = 0; i < env.iterations + 3; i++)
		turns.push({ tool_calls: [{ name: 'code_execution',
		    arguments: { code: `print(${i} * 7)` } }] });
	await dbl.reset();
	await dbl.script(...turns);
	let r, err;
	try {
		r = await a.ask({ model, stream, tools: [a.codeTool],
		    content: [a.parts.text('Loop for ever.')] });
	} catch (e) {
		err = e;
	}
	t.ok(err instanceof a.mod.APIError &&
	    !(err instanceof a.mod.APIConnectionError) &&
	    (err.status === undefined || err.status >= 400) &&
	    a.envelope(err), `${label}: an error in the caller's dialect`,
	    err ? `${err.constructor.name} ${err.status}: ${err.message} ` +
	    JSON.stringify(err.error) : `no error: ${r?.stop} ${r?.text}`);
	if (!stream)
		t.ok(err?.status === 422, `${label}: status 422`, err?.status);
	const log = await dbl.log();
	t.ok(log.length === env.iterations, `${label}: exactly ` +
	    `${env.iterations} upstream requests (max-tool-iterations)`,
	    log.length);
	await dbl.reset();
	return true;
}

// A caller that declared the provider's own code-execution tool gets
// the run as the provider's blocks, before the model's text, streamed
// or not: the code, its stdout, and the produced file's depotd id,
// which downloads as a PNG.
export async function nativeCheck(t, a, model, stream) {
	const label = `${a.route} ${model} ${stream ? 'stream' : 'plain'}` +
	    ' native';
	const { d, r } = await askForChart(t, a, model, stream,
	    a.native.tool, label);
	const n = a.native.read(r?.blocks ?? []);
	const one = n.runs[0];
	t.ok(n.runs.length === 1 && one.code === d.code &&
	    one.stdout?.includes(d.stdout), `${label}: one native run ` +
	    'with its code and stdout', JSON.stringify(n.runs).slice(0, 800));
	t.ok(JSON.stringify(n.order) === JSON.stringify(a.native.order),
	    `${label}: the run's ${a.native.order.slice(0, -1).join(' + ')}` +
	    ` first, the model's ${a.native.order.at(-1)} after`,
	    JSON.stringify(n.order));
	const m = r?.text?.match(fileLine);
	t.ok(m && one?.files?.length === 1 && one.files[0] === m[1],
	    `${label}: the run lists the file id the model's text names`,
	    `${JSON.stringify(one?.files)} ${r?.text}`);
	if (one?.files?.[0]) {
		const png = await a.own.bytes(one.files[0]);
		t.ok(isPng(png), `${label}: that file id downloads as a PNG`,
		    png?.subarray(0, 16).toString('hex'));
	}
	if (stream) {
		t.ok(a.native.streamed(r?.events ?? []), `${label}: the ` +
		    'stream carries the run\'s blocks', JSON.stringify(
		    r?.events ?? null).slice(0, 800));
		t.ok(r && !a.native.shown(r.events), `${label}: the stream ` +
		    'shows no function call', JSON.stringify(r?.events ??
		    null).slice(0, 800));
	}
	const log = await dbl.log();
	t.ok(log.length === 2 && log.every((q) => q.status === 200),
	    `${label}: two upstream requests (the code, the answer)`,
	    JSON.stringify(log.map((q) => [q.path, q.status])));
	toolsSeen(t, label, log);
	const sent = JSON.stringify(log.map((q) => q.body?.tools ?? null));
	t.ok(!sent.includes(a.native.tool.type), `${label}: the native ` +
	    'declaration never reaches the upstream', sent.slice(0, 800));
	return true;
}

// Every check of one route.
export async function runRoute(t, a) {
	const parts = [];
	for (const model of MODELS) {
		for (const stream of [false, true])
			parts.push([`${a.route} ${model} ` +
			    `${stream ? 'stream' : 'plain'} chart`, () =>
			    chartCheck(t, a, model, stream)]);
		for (const stream of [false, true])
			parts.push([`${a.route} ${model} ` +
			    `${stream ? 'stream' : 'plain'} own tool`, () =>
			    ownToolCheck(t, a, model, stream)]);
	}
	for (const model of a.native ? MODELS : [])
		for (const stream of [false, true])
			parts.push([`${a.route} ${model} ` +
			    `${stream ? 'stream' : 'plain'} native`, () =>
			    nativeCheck(t, a, model, stream)]);
	parts.push([`${a.route} iteration cap`, () =>
	    capCheck(t, a, 'm-chat', false)]);
	parts.push([`${a.route} streamed iteration cap`, () =>
	    capCheck(t, a, 'm-anth', true)]);
	await run(t, parts);
}
