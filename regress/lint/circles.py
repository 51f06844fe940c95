#!/usr/bin/env python3
# Copyright (c) 2026 The depotd authors
#
# Permission to use, copy, modify, and distribute this software for any
# purpose with or without fee is hereby granted, provided that the above
# copyright notice and this permission notice appear in all copies.
#
# THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
# WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
# MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
# ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
# WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
# ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
# OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.

# regress/lint/circles.py: no two source files call into each other in a
# circle.  The graph is read from the objects, not the text: a file A
# calls into file B when A's object leaves undefined a function that
# B's object defines (a function named in a table counts: the table's
# file depends on it).  Shared variables are not calls and do not count.
# Every strongly connected set of more than one file within a program
# is a circle, and is printed with the functions that close it.  Exit
# 1 when there is one; the output is in the suites' ok / not ok form.
# Objects whose source is gone are skipped.
#
# usage: circles.py BUILDDIR (run from the top of the tree)

import os
import subprocess
import sys

PROGRAMS = ["cmd/depotd", "cmd/depot-sandboxd", "cmd/depotctl", "lib"]


def objects(build, prog):
	top = os.path.join(build, prog)
	for dirpath, _, names in os.walk(top):
		for n in sorted(names):
			o = os.path.join(dirpath, n)
			src = os.path.relpath(o, build)[:-2] + ".c"
			if n.endswith(".o") and os.path.exists(src):
				yield o


def symbols(obj):
	out = subprocess.run(["nm", obj], capture_output=True, text=True,
	    check=True).stdout
	defined, undefined = set(), set()
	for line in out.splitlines():
		f = line.split()
		if len(f) == 2 and f[0] == "U":
			undefined.add(f[1])
		elif len(f) == 3 and f[1] == "T":
			defined.add(f[2])
	return defined, undefined


def graph(build, prog):
	owner, uses = {}, {}
	for o in objects(build, prog):
		name = os.path.relpath(o, build)[:-2] + ".c"
		d, u = symbols(o)
		for s in d:
			owner[s] = name
		uses[name] = u
	edges = {}
	for f, u in uses.items():
		edges[f] = {}
		for s in u:
			g = owner.get(s)
			if g is not None and g != f:
				edges[f].setdefault(g, []).append(s)
	return edges


def strong_sets(edges):
	index, low, stack, on, out = {}, {}, [], set(), []
	counter = [0]

	def visit(v):
		index[v] = low[v] = counter[0]
		counter[0] += 1
		stack.append(v)
		on.add(v)
		for w in edges[v]:
			if w not in index:
				visit(w)
				low[v] = min(low[v], low[w])
			elif w in on:
				low[v] = min(low[v], index[w])
		if low[v] == index[v]:
			s = []
			while True:
				w = stack.pop()
				on.discard(w)
				s.append(w)
				if w == v:
					break
			if len(s) > 1:
				out.append(sorted(s))

	sys.setrecursionlimit(10000)
	for v in sorted(edges):
		if v not in index:
			visit(v)
	return out


def main():
	build = sys.argv[1] if len(sys.argv) > 1 else "build"
	bad = 0
	for prog in PROGRAMS:
		edges = graph(build, prog)
		sets = strong_sets(edges)
		if not edges:
			print("not ok - %s: no objects under %s" % (prog, build))
			bad += 1
			continue
		if not sets:
			print("ok - no circles among the %d files of %s" %
			    (len(edges), prog))
			continue
		bad += 1
		print("not ok - %d circle(s) among the files of %s" %
		    (len(sets), prog))
		for s in sets:
			print("# circle:")
			for f in s:
				for g in sorted(edges[f]):
					if g in s:
						print("#   %s -> %s (%s)" % (f, g,
						    ", ".join(sorted(edges[f][g])[:4])))
	return 1 if bad else 0


if __name__ == "__main__":
	sys.exit(main())
