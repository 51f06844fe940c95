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


// regress/models/plan.mjs: the checks every dialect's script runs, in
// order, each part failing alone if it throws.

import { env, run, routeChecks, toolChecks, faultChecks, abortCheck,
    unknownModel, badKey, bridgeChecks, tooDeep, tooLarge,
    downCheck, modelChecks } from './common.mjs';
import { uploadAll, refChecks, badRefChecks, textOnlyChecks,
    bigPdfCheck } from './refs.mjs';

// big: the model a 20 MB PDF goes to when MODELS_BIG=1, or null.
export async function runAll(t, a, big) {
	let files = null;
	await run(t, [
		async function listing() {
			if (a.models)
				await modelChecks(t, a);
		},
		function routes() { return routeChecks(t, a); },
		function bridging() { return bridgeChecks(t, a); },
		function toolCalls() { return toolChecks(t, a); },
		async function references() {
			files = await uploadAll(t, a);
			if (files)
				await refChecks(t, a, files);
		},
		async function textOnly() {
			if (files)
				await textOnlyChecks(t, a, files);
		},
		function badReferences() { return badRefChecks(t, a); },
		function unknown() { return unknownModel(t, a); },
		function auth() { return badKey(t, a); },
		function faults() { return faultChecks(t, a); },
		function down() { return downCheck(t, a); },
		function abort() { return abortCheck(t, a); },
		function deep() { return tooDeep(t, a); },
		function large() { return tooLarge(t, a); },
		async function bigPdf() {
			if (env.big && big)
				await bigPdfCheck(t, a, big);
		},
	]);
}
