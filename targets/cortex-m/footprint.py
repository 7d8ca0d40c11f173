#!/usr/bin/env python3
"""footprint.py MAP [OBJDIR] - the flash a firmware spends per component, from the GNU ld map
file of its link (-Wl,-Map): text + rodata + data of every input section kept (after
--gc-sections), grouped as onnxrun's loader (with the generated ONNX descriptors apart),
runtime, each op, kernels and platform layer, protobuf-c's runtime, the C library
(newlib, libm, libgcc) and the firmware itself (application, startup, model bytes).

onnxrun's objects are told apart by the symbols in them (section names are symbol names
with -ffunction-sections): OBJDIR is the CMake build folder holding the library's objects
(default: the map's folder's parent, as examples/mcu writes the map to BUILD/examples).
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

FLASH = (".text", ".rodata", ".data")


def components(objdir):
    """symbol -> component, from the library's object files."""
    comp = {}
    for root, _, files in os.walk(objdir):
        for f in files:
            if not f.endswith(".obj") and not f.endswith(".o"):
                continue
            path = os.path.join(root, f)
            p = path.replace(os.sep, "/")
            if "/src/loader/" in p:
                c = "loader"
            elif "onnx.pb-c" in p:
                c = "loader: generated ONNX descriptors (onnx.pb-c.c)"
            elif "/src/runtime/" in p or p.endswith("/src/ops/registry.c.obj"):
                c = "runtime"
            elif "/src/ops/conv_transpose/" in p:
                c = "op: ConvTranspose"
            elif "/src/ops/depth_to_space/" in p:
                c = "op: DepthToSpace"
            elif "/src/kernels/" in p:
                c = "kernels"
            elif "/src/platform/" in p:
                c = "platform"
            else:
                continue
            out = subprocess.run(["arm-none-eabi-nm", path], capture_output=True, text=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) == 3:
                    comp.setdefault(parts[2], c)
    return comp


def sections(map_path):
    """(section name, size, file) of every input section in the memory map."""
    text = open(map_path).read()
    text = text[text.index("Linker script and memory map"):]
    lines = text.splitlines()
    pat = re.compile(r"^ (\.\S+)(?:\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S.*))?$")
    full = re.compile(r"^\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S.*)$")
    for i, line in enumerate(lines):
        m = pat.match(line)
        if not m:
            continue
        name = m.group(1)
        if m.group(2):
            size, where = int(m.group(3), 16), m.group(4)
        elif i + 1 < len(lines) and full.match(lines[i + 1]):
            mm = full.match(lines[i + 1])
            size, where = int(mm.group(2), 16), mm.group(3)
        else:
            continue
        yield name, size, where


def main():
    map_path = sys.argv[1]
    objdir = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.dirname(os.path.abspath(map_path)))
    comp = components(objdir)
    total = defaultdict(int)
    for name, size, where in sections(map_path):
        if not name.startswith(FLASH) or size == 0 or name.startswith(".data.") and False:
            continue
        if "libonnxrun.a" in where:
            sym = re.sub(r"^\.(text|rodata|data)\.", "", name)
            sym = re.sub(r"^str1\.\d+$", "", sym)
            c = comp.get(sym)
            if c is None:  # merged string constants and the like: by the object's own name
                obj = re.search(r"\((.*)\)", where).group(1)
                c = "onnxrun: strings and constants (" + obj + ")" if obj else "onnxrun: other"
                c = "onnxrun: merged strings and constants"
        elif "libprotobuf-c.a" in where:
            c = "protobuf-c runtime"
        elif re.search(r"lib(c|c_nano|g|g_nano|m|gcc|nosys)\.a", where) or "crt" in os.path.basename(where):
            c = "C library (newlib, libm, libgcc)"
        else:
            c = "firmware (application, startup, model and input bytes)"
        total[c] += size
    lib = sum(v for k, v in total.items() if k.startswith(("loader", "runtime", "op:", "kernels", "platform", "onnxrun")))
    print("%-56s %9s" % ("component (text + rodata + data)", "bytes"))
    for k in sorted(total, key=lambda k: -total[k]):
        print("%-56s %9d" % (k, total[k]))
    print("%-56s %9d" % ("onnxrun (all of the above from libonnxrun.a)", lib))
    print("%-56s %9d" % ("onnxrun + protobuf-c runtime", lib + total.get("protobuf-c runtime", 0)))


if __name__ == "__main__":
    main()
