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

// regress/harness/sdk.mjs: what the node SDK checks share: the
// environment the suite sets, an SDK under its install name (npm
// aliases the older majors) from the modules sdk.sh installs, and one
// "ok"/"not ok" line per check.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

// An environment variable the suite must set.
export function need(name) {
	const v = process.env[name];
	if (!v) {
		console.log(`not ok - environment variable ${name} is set`);
		process.exit(1);
	}
	return v;
}

// Every object in a JSON value that satisfies pred.
export function objects(v, pred, out = []) {
	if (Array.isArray(v))
		v.forEach((x) => objects(x, pred, out));
	else if (v && typeof v === 'object') {
		if (pred(v))
			out.push(v);
		Object.values(v).forEach((x) => objects(x, pred, out));
	}
	return out;
}

// The package under its install name and the version really installed.
export function loadSdk(modules, alias) {
	const req = createRequire(path.join(modules, 'package.json'));
	const mod = req(alias);
	const pkg = JSON.parse(fs.readFileSync(path.join(modules,
	    'node_modules', alias, 'package.json'), 'utf8'));
	return { mod, name: pkg.name, version: pkg.version };
}

let failures = 0;

export function reporter(prefix) {
	return {
		ok(cond, what, detail) {
			if (cond) {
				console.log(`ok - ${prefix}: ${what}`);
			} else {
				failures++;
				console.log(`not ok - ${prefix}: ${what}`);
				if (detail !== undefined)
					console.log('# ' + String(detail)
					    .replace(/\n/g, '\n# '));
			}
			return cond;
		},
		// A check whose body may throw: the exception is the failure.
		async step(what, fn) {
			try {
				const r = await fn();
				if (r === false)
					return this.ok(false, what);
				this.ok(true, what);
				return true;
			} catch (e) {
				this.ok(false, what, e?.stack ?? e);
				return false;
			}
		},
	};
}

export function failed() {
	return failures;
}
