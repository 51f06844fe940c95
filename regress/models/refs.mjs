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

// regress/models/refs.mjs: file references in model requests (SPEC
// 6.1), the same in every dialect: test files made here (a text file,
// a PDF written by hand, a PNG), uploaded through the caller's SDK
// (adapter.upload), then named by every reference kind the dialect has
// (adapter.parts.file/image, adapter.bare), and what the upstream
// double received compared with the bytes.

import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { env, dbl, MODELS, NATIVE, rand, strings, objects, findInline,
    checkUpstream, onlyRequest, expectError } from './common.mjs';

// The lines pdftotext must find in pdfFile().
export const PDF_LINES = ['Depot PDF line one', 'second line of the PDF'];

// A one-page PDF with the given lines in Helvetica; pad adds an
// unreferenced stream of that many random bytes (the 20 MB case).
export function pdfFile(lines, pad = 0) {
	const text = lines.map((l, i) => (i ? 'T* ' : '') + `(${l}) Tj`)
	    .join(' ');
	const content = `BT /F1 12 Tf 72 720 Td 14 TL ${text} ET`;
	const objs = [
		'<< /Type /Catalog /Pages 2 0 R >>',
		'<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
		'<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] ' +
		    '/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
		'<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
		Buffer.from(`<< /Length ${content.length} >>\nstream\n` +
		    `${content}\nendstream`),
	];
	if (pad > 0)
		objs.push(Buffer.concat([
		    Buffer.from(`<< /Length ${pad} >>\nstream\n`),
		    randomBytes(pad), Buffer.from('\nendstream')]));
	const parts = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
	let at = parts[0].length;
	const offsets = [];
	objs.forEach((o, i) => {
		const b = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`),
		    Buffer.isBuffer(o) ? o : Buffer.from(o),
		    Buffer.from('\nendobj\n')]);
		offsets.push(at);
		parts.push(b);
		at += b.length;
	});
	const n = objs.length + 1;
	let xref = `xref\n0 ${n}\n0000000000 65535 f \n`;
	for (const o of offsets)
		xref += `${String(o).padStart(10, '0')} 00000 n \n`;
	xref += `trailer\n<< /Size ${n} /Root 1 0 R >>\nstartxref\n${at}\n` +
	    '%%EOF\n';
	parts.push(Buffer.from(xref));
	return Buffer.concat(parts);
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
	let c = n;
	for (let k = 0; k < 8; k++)
		c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
	return c >>> 0;
});

function crc32(buf) {
	let c = 0xffffffff;
	for (const b of buf)
		c = crcTable[(c ^ b) & 0xff] ^ (c >>> 8);
	return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
	const len = Buffer.alloc(4);
	len.writeUInt32BE(data.length);
	const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
	const crc = Buffer.alloc(4);
	crc.writeUInt32BE(crc32(td));
	return Buffer.concat([len, td, crc]);
}

// A 2x2 RGBA PNG of random colours.
export function pngFile() {
	const ihdr = Buffer.from([0, 0, 0, 2, 0, 0, 0, 2, 8, 6, 0, 0, 0]);
	const rows = Buffer.concat([Buffer.from([0]), randomBytes(8),
	    Buffer.from([0]), randomBytes(8)]);
	return Buffer.concat([
	    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
	    chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)),
	    chunk('IEND', Buffer.alloc(0))]);
}

// The files each SDK uploads through its own files API.
export async function uploadAll(t, a) {
	const tag = rand();
	const want = {
		pdf: { name: `doc-${tag}.pdf`, mime: 'application/pdf',
		    data: pdfFile(PDF_LINES) },
		png: { name: `pic-${tag}.png`, mime: 'image/png',
		    data: pngFile() },
		txt: { name: `notes-${tag}.txt`, mime: 'text/plain',
		    data: Buffer.from(`plain notes ${tag}\nsecond line, ` +
		    'caf\u00e9 "quoted" \\ back') },
	};
	for (const [k, f] of Object.entries(want)) {
		const ok = await t.step(`upload ${k} through the SDK`,
		    async () => {
			f.id = await a.upload(f.name, f.data, f.mime);
			return /^file-/.test(f.id);
		});
		if (!ok)
			return null;
	}
	return want;
}

// Uploads with another key, raw: a file of another tenant.
async function rawUpload(key, name, data) {
	const form = new FormData();
	form.append('purpose', 'user_data');
	form.append('file', new Blob([data]), name);
	const r = await fetch(env.url + '/v1/files', { method: 'POST',
	    headers: { Authorization: `Bearer ${key}` }, body: form });
	if (r.status !== 200)
		throw new Error(`upload: ${r.status} ${await r.text()}`);
	return (await r.json()).id;
}

// The block that carries inline data in an Anthropic-shaped body.
function b64Block(body, b64) {
	return objects(body, (o) => o.source && o.source.data === b64)[0];
}

function shapeOk(model, f, body, s) {
	const b64 = f.data.toString('base64');
	if (MODELS[model].api === 'openai')
		return s.startsWith(`data:${f.mime};base64,`);
	const src = b64Block(body, b64)?.source;
	return src?.type === 'base64' && src.media_type === f.mime;
}

// Each reference kind to each native upstream: inline base64 equal to
// the uploaded bytes, in the upstream's shape.
export async function refChecks(t, a, files) {
	const kinds = [
		['file reference (PDF)', files.pdf, (id) => ({
		    content: [a.parts.text('see file'), a.parts.file(id)] })],
		['image reference (PNG)', files.png, (id) => ({
		    content: [a.parts.text('see image'), a.parts.image(id)] })],
	];
	if (a.bare)
		kinds.push(
		    ['bare input_file item (PDF)', files.pdf, (id) => ({
			bare: [a.bare.file(id)],
			content: [a.parts.text('see bare file')] })],
		    ['bare input_image item (PNG)', files.png, (id) => ({
			bare: [a.bare.image(id)],
			content: [a.parts.text('see bare image')] })]);
	for (const model of NATIVE) {
		for (const [kind, f, req] of kinds) {
			const label = `${a.route} ${model} ${kind}`;
			await t.step(`${label}: answered`, async () => {
				await dbl.reset();
				const r = await a.ask({ model, stream: false,
				    ...req(f.id) });
				const q = await onlyRequest(t, label);
				checkUpstream(t, label, q, model);
				const s = q ? findInline(q.body, f.data) : null;
				const seen = q ?
				    JSON.stringify(q.body).slice(0, 400) : '';
				t.ok(s !== null, `${label}: inline base64 ` +
				    'equal to the uploaded bytes', seen);
				t.ok(s !== null && shapeOk(model, f, q.body, s),
				    `${label}: in the upstream's own shape`,
				    seen);
				const extra = a.parts.fileExtra;
				if (extra && f === files.pdf &&
				    !kind.startsWith('bare') &&
				    model === 'm-anth')
					keptKeys(t, label, q, f, extra);
				return r.text.startsWith('echo: ');
			});
		}
	}
}

function keptKeys(t, label, q, f, extra) {
	const blk = q ? b64Block(q.body, f.data.toString('base64')) : null;
	t.ok(blk && Object.entries(extra).every(([k, v]) =>
	    JSON.stringify(blk[k]) === JSON.stringify(v)),
	    `${label}: ${Object.keys(extra).join(' and ')} kept`,
	    JSON.stringify({ ...blk, source: undefined }));
}

// Missing, another tenant's, deleted: the same 400 naming the id, and
// nothing sent upstream.
export async function badRefChecks(t, a) {
	const ids = [['an unknown id', 'file-' + randomBytes(16)
	    .toString('hex')]];
	await t.step(`${a.route}: a file of another tenant and a deleted ` +
	    'file to name', async () => {
		const other = await rawUpload(env.otherKey, 'other.txt',
		    Buffer.from('not yours'));
		const gone = await rawUpload(env.key, 'gone.txt',
		    Buffer.from('bye'));
		const r = await fetch(env.url + `/v1/files/${gone}`, {
		    method: 'DELETE',
		    headers: { Authorization: `Bearer ${env.key}` } });
		ids.push(['another tenant\'s id', other],
		    ['a deleted file\'s id', gone]);
		return r.status === 200;
	});
	const shapes = [['file', a.parts.file], ['image', a.parts.image]];
	if (a.bare)
		shapes.push(['bare file', a.bare.file]);
	const messages = [];
	for (const [what, id] of ids) {
		for (const [shape, part] of shapes) {
			const label = `${a.route} ${shape} reference ` +
			    `to ${what}`;
			await dbl.reset();
			const bare = shape.startsWith('bare');
			const err = await expectError(t, label, () => a.ask({
			    model: 'm-chat', stream: false,
			    bare: bare ? [part(id)] : undefined,
			    content: bare ? [a.parts.text('x')] :
			    [a.parts.text('x'), part(id)] }),
			    a.mod.BadRequestError, 400);
			t.ok(err && err.message.includes(id),
			    `${label}: the message names the id`, err?.message);
			if (err)
				messages.push(err.message.split(id).join('ID'));
			t.ok((await dbl.log()).length === 0,
			    `${label}: the upstream is not called`);
		}
	}
	t.ok(messages.length === ids.length * shapes.length &&
	    messages.every((m) => m === messages[0]),
	    `${a.route} unresolvable references: one message for every ` +
	    'case (no existence leak)', messages.join('\n'));
}

function wrapped(name, body) {
	return `[Attached file: ${name}]\n${body}\n[End of ${name}]`;
}

// Text-only and pdf-as-text models.
export async function textOnlyChecks(t, a, files) {
	const run = async (label, model, content) => {
		await dbl.reset();
		await a.ask({ model, stream: false, content });
		const q = await onlyRequest(t, label);
		checkUpstream(t, label, q, model);
		return q ? strings(q.body) : [];
	};
	const { txt, pdf, png } = files;
	const pdfText = new RegExp(`\\[Attached file: ${pdf.name.replace(
	    /\./g, '\\.')}\\]\\n[^]*${PDF_LINES[0]}[^]*${PDF_LINES[1]}` +
	    `[^]*\\n\\[End of ${pdf.name.replace(/\./g, '\\.')}\\]`);
	await t.step(`${a.route} m-text text file`, async () => {
		const s = await run(`${a.route} m-text text file`, 'm-text',
		    [a.parts.text('read'), a.parts.file(txt.id)]);
		const w = wrapped(txt.name, txt.data.toString('utf8'));
		return t.ok(s.some((x) => x.includes(w)),
		    `${a.route} m-text: the text file arrives in the ` +
		    '[Attached file] wrapper', JSON.stringify(s).slice(0, 600));
	});
	await t.step(`${a.route} m-text PDF`, async () => {
		const s = await run(`${a.route} m-text PDF`, 'm-text',
		    [a.parts.text('read'), a.parts.file(pdf.id)]);
		return t.ok(s.some((x) => pdfText.test(x)),
		    `${a.route} m-text: the PDF arrives as extracted text in ` +
		    'the same wrapper', JSON.stringify(s).slice(0, 600));
	});
	await t.step(`${a.route} m-text PNG`, async () => {
		const s = await run(`${a.route} m-text PNG`, 'm-text',
		    [a.parts.text('look'), a.parts.image(png.id)]);
		const b64 = png.data.toString('base64');
		return t.ok(s.some((x) => x.includes('[Unprocessable ' +
		    `attachment omitted: ${png.name}]`)) &&
		    !s.some((x) => x.includes(b64)),
		    `${a.route} m-text: a PNG becomes the omission marker`,
		    JSON.stringify(s).slice(0, 600));
	});
	if (a.bare)
		await t.step(`${a.route} m-text bare input_file`, async () => {
			await dbl.reset();
			await a.ask({ model: 'm-text', stream: false,
			    bare: [a.bare.file(txt.id)],
			    content: [a.parts.text('read')] });
			const q = await onlyRequest(t,
			    `${a.route} m-text bare`);
			const w = wrapped(txt.name, txt.data.toString('utf8'));
			const users = objects(q?.body, (o) =>
			    o.role === 'user' &&
			    strings(o.content).some((x) => x.includes(w)));
			return t.ok(users.length === 1, `${a.route} m-text: ` +
			    'a bare input_file arrives as text in a user ' +
			    'message', JSON.stringify(q?.body).slice(0, 600));
		});
	await t.step(`${a.route} m-pdftext PDF and PNG`, async () => {
		const s = await run(`${a.route} m-pdftext`, 'm-pdftext',
		    [a.parts.text('both'), a.parts.file(pdf.id),
		    a.parts.image(png.id)]);
		const img = s.find((x) => x === 'data:image/png;base64,' +
		    png.data.toString('base64'));
		t.ok(s.some((x) => pdfText.test(x)), `${a.route} m-pdftext: ` +
		    'the PDF arrives as text', JSON.stringify(s).slice(0, 600));
		return t.ok(img !== undefined, `${a.route} m-pdftext: the ` +
		    'PNG arrives natively as a data: URL');
	});
}

// A 20 MB PDF inlined natively (DEPOT_MAX_SIZE=64M in suite.sh).
export async function bigPdfCheck(t, a, model) {
	const label = `${a.route} ${model} 20 MB PDF`;
	await t.step(`${label}: inlined natively`, async () => {
		const data = pdfFile(PDF_LINES, 20 * 1024 * 1024);
		const id = await a.upload(`big-${rand()}.pdf`, data,
		    'application/pdf');
		await dbl.reset();
		const t0 = Date.now();
		await a.ask({ model, stream: false,
		    content: [a.parts.text('big'), a.parts.file(id)] });
		const ms = Date.now() - t0;
		const q = await onlyRequest(t, label);
		checkUpstream(t, label, q, model);
		return t.ok(q && findInline(q.body, data) !== null,
		    `${label}: the upstream gets all ${data.length} bytes ` +
		    `in base64 (${ms} ms)`);
	});
}
