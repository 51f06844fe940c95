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


// regress/models/openai.mjs: the OpenAI SDK that chat.mjs and
// responses.mjs drive, under its install name ("openai", "openai6"),
// with a client that gets baseURL, apiKey and maxRetries 0 only.

import { env, setup } from './common.mjs';

export function openai(alias) {
	return setup(alias || 'openai', (mod, apiKey) =>
	    new (mod.OpenAI ?? mod.default)({ baseURL: env.url + '/v1',
	    apiKey, maxRetries: 0, timeout: 120000 }));
}
