#!/usr/bin/env python3
"""check_vex.py LIBRARY.a [OBJDUMP] - no AVX code in the library calls legacy-SSE code.

A function compiled for AVX2/AVX-512 leaves the upper halves of the vector registers dirty;
if it then calls a helper compiled without AVX (plain SSE encodings: movss, pxor, cvt...)
and no vzeroupper comes in between, Intel CPUs pay a penalty on each of the helper's SSE
instructions. It made the depthwise ConvTranspose kernel about 3x slower on an Intel Xeon
(its per-row helpers were plain functions called from the AVX-512 rows). Helpers used by
ISA-specific code must be inlined into it (static inline __attribute__((always_inline))).

Reads `objdump -d` of the archive (OBJDUMP: the build's objdump, the cross one for a
cross build; default `objdump`); for every function that touches ymm/zmm registers, checks
each direct call into the archive. The archive's own format decides whether there is
anything to check, not the machine running the script. Exit 0: clean; 1: a hazard (listed);
77: cannot check (the library is not x86-64, no objdump).
"""
import re
import shutil
import subprocess
import sys

LEGACY = re.compile(
    r"^(movss|movsd|movaps|movapd|movups|movupd|movd|movq|movdqa|movdqu|pxor|xorps|xorpd|andps|andpd|"
    r"orps|addss|addsd|subss|subsd|mulss|mulsd|divss|divsd|sqrtss|sqrtsd|maxss|maxsd|minss|minsd|"
    r"ucomiss|ucomisd|comiss|comisd|cvt\w+|pshufd|shufps|unpck\w+|punpck\w+|paddd|paddq|psubd|pand|por)\s")


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    objdump = sys.argv[2] if len(sys.argv) == 3 and sys.argv[2] else "objdump"
    if not shutil.which(objdump):
        print(f"check_vex: no {objdump}; skipped")
        return 77
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", sys.argv[1]], check=True,
                          capture_output=True, text=True).stdout
    formats = set(re.findall(r"file format (\S+)", text))
    # ELF (Linux) or PE (the Windows build's static library)
    if formats not in ({"elf64-x86-64"}, {"pe-x86-64"}):
        print(f"check_vex: the library is {', '.join(sorted(formats)) or 'empty'}, not x86-64: "
              "no AVX code to check; skipped")
        return 77
    funcs, cur, obj = {}, None, None
    for line in text.splitlines():
        if line.rstrip().endswith(("file format elf64-x86-64", "file format pe-x86-64")):
            obj = line.split(":")[0]
            continue
        m = re.match(r"^[0-9a-f]+ <(.+)>:", line)
        if m:
            cur = (obj, m.group(1))
            funcs[cur] = []
        elif cur and "\t" in line:
            funcs[cur].append(line.split("\t", 1)[1].strip())
    sse_users = {}
    for (o, name), ins in funcs.items():
        bad = [i for i in ins if LEGACY.match(i) and "%xmm" in i]
        if bad:
            sse_users[(o, name)] = bad[0]
    wide = [(k, ins) for k, ins in funcs.items() if any("%ymm" in i or "%zmm" in i for i in ins)]
    hazards = 0
    for (o, name), ins in wide:
        for at, i in enumerate(ins):
            m = re.match(r"(call|jmp)\s+\S+\s+<([^>+]+)>", i)
            if not m or m.group(2) == name:
                continue
            # a static callee lives in the caller's object; a global one anywhere
            callee = next((k for k in ((o, m.group(2)),) if k in sse_users), None) or \
                next((k for k in sse_users if k[1] == m.group(2) and not k[1].startswith(".")), None)
            if callee and not any("vzeroupper" in x for x in ins[max(0, at - 8):at]):
                print(f"{o}: {name} (AVX) calls {m.group(2)}, which runs legacy SSE "
                      f"('{sse_users[callee]}') with the upper register halves dirty")
                hazards += 1
    print(f"check_vex: {len(wide)} AVX functions checked, {hazards} hazards")
    return 1 if hazards else 0


if __name__ == "__main__":
    sys.exit(main())
