#!/usr/bin/env python3
"""Checks the layering of src/ (run by .ci/test.sh; exit 1 with a list of problems):

1. No include cycle among the files of src/ops (headers and sources, by their "..." includes),
   and no cycle of calls between source files of src/ops: a function defined in one .c file
   and called from another is an edge between them (found by name, from the definitions of
   non-static functions).
2. Instruction-set code only in src/kernels: no file outside it mentions __x86_64__, __AVX,
   immintrin or cpuid.
3. Operating-system interfaces only in src/platform: no file outside it includes a POSIX or
   Windows header (pthread.h, unistd.h, sys/..., dirent.h, fcntl.h, windows.h, io.h, ...)
   or calls mmap, posix_memalign, realpath, pthread_*, sysconf and the like; and
   src/platform depends on nothing else of ours (it includes only its own headers).
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SRC = os.path.join(ROOT, "src")
OPS = os.path.join(SRC, "ops")

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# a non-static function definition at the start of a line: type ... name(args) {
DEFINITION = re.compile(r'^(?!static\b)[A-Za-z_][\w \t\*]*?\b(onnxrun__\w+)\s*\([^;{]*\)\s*\{', re.M)
ISA = re.compile(r'__x86_64__|__AVX|immintrin|cpuid')
OS_HEADER = re.compile(r'^\s*#\s*include\s*<(pthread|unistd|dirent|fcntl|spawn|windows|io|direct|process|'
                       r'sys/[\w/]+)\.h>', re.M)
OS_CALL = re.compile(r'\b(mmap|munmap|posix_memalign|_aligned_malloc|realpath|_fullpath|fseeko|ftello|'
                     r'_fseeki64|pthread_\w+|sysconf|scandir|alphasort|opendir|open_memstream|getline|'
                     r'ioctl|isatty|clock_gettime|sigaction|CreateFile\w*|MapViewOfFile)\s*\(')


def files(top, exts):
    for d, _, names in os.walk(top):
        for n in sorted(names):
            if n.endswith(exts):
                yield os.path.join(d, n)


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', text)


def find_cycle(graph):
    """A cycle of graph (node -> set of nodes) as a list, or None."""
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def rel(p):
    return os.path.relpath(p, ROOT)


def main():
    problems = []
    ops_files = list(files(OPS, (".c", ".h")))
    text = {p: strip_comments(open(p, encoding="utf-8").read()) for p in ops_files}

    includes = {}
    for p in ops_files:
        targets = set()
        for inc in INCLUDE.findall(text[p]):
            q = os.path.normpath(os.path.join(os.path.dirname(p), inc))
            if q.startswith(OPS + os.sep):
                targets.add(q)
        includes[p] = targets
    cycle = find_cycle(includes)
    if cycle:
        problems.append("include cycle in src/ops: " + " -> ".join(rel(p) for p in cycle))

    sources = [p for p in ops_files if p.endswith(".c")]
    defined_in = {}
    for p in sources:
        for name in DEFINITION.findall(text[p]):
            defined_in[name] = p
    calls = {p: set() for p in sources}
    for p in sources:
        for name in set(re.findall(r'\b(onnxrun__\w+)\s*\(', text[p])):
            q = defined_in.get(name)
            if q and q != p:
                calls[p].add(q)
    cycle = find_cycle(calls)
    if cycle:
        problems.append("call cycle in src/ops: " + " -> ".join(rel(p) for p in cycle))

    kernels = os.path.join(SRC, "kernels") + os.sep
    for p in files(SRC, (".c", ".h")):
        if p.startswith(kernels):
            continue
        for i, line in enumerate(open(p, encoding="utf-8"), 1):
            if ISA.search(line):
                problems.append("%s:%d: instruction-set code outside src/kernels: %s" % (rel(p), i, line.strip()))

    platform = os.path.join(SRC, "platform") + os.sep
    for p in files(SRC, (".c", ".h")):
        code = strip_comments(open(p, encoding="utf-8").read())
        if p.startswith(platform):
            for inc in INCLUDE.findall(code):
                if os.path.dirname(os.path.normpath(os.path.join(os.path.dirname(p), inc))) + os.sep != platform:
                    problems.append("%s: src/platform includes '%s' (it depends on nothing else of ours)"
                                    % (rel(p), inc))
            continue
        for m in OS_HEADER.finditer(code):
            problems.append("%s: operating-system header outside src/platform: <%s.h>" % (rel(p), m.group(1)))
        for m in OS_CALL.finditer(code):
            problems.append("%s: operating-system call outside src/platform: %s()" % (rel(p), m.group(1)))

    for msg in problems:
        print("check_layers: " + msg)
    if problems:
        return 1
    print("check_layers: %d files in src/ops, no include or call cycle; no instruction-set code outside src/kernels;"
          " no operating-system interface outside src/platform" % len(ops_files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
