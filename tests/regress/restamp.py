#!/usr/bin/env python3
"""Re-stamp checked-in .dwb regression inputs with this build's instruction-set
digest (vm/artifact_format.h, header bytes 32..40) and reseal size and checksum.
After an instruction-set change the hostile files in tests/regress/ are refused
at the digest and no longer reach the check they were kept for; their NAME.expect
(tests/regress.sh) says so.  Re-stamp them only if the change leaves the opcodes
their code uses meaning the same, and confirm tests/regress.sh passes after.
Usage: tests/regress/restamp.py DWC FILE.dwb..."""
import ctypes, os, struct, subprocess, sys, tempfile

xx = ctypes.CDLL("libxxhash.so.0")
xx.XXH3_64bits.restype = ctypes.c_uint64
xx.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
xx.XXH3_64bits_withSeed.restype = ctypes.c_uint64
xx.XXH3_64bits_withSeed.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]

def current_digest(dwc):
    """The digest a fresh compile by DWC stamps."""
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "p.cedar"), os.path.join(d, "p.dwb")
        open(src, "w").write("permit (principal, action, resource);\n")
        subprocess.run([dwc, "compile", "-p", src, "-o", out], check=True)
        return open(out, "rb").read()[32:40]

def restamp(b, digest):
    b = bytearray(b)
    b[32:40] = digest
    struct.pack_into("<Q", b, 16, len(b))
    seed = xx.XXH3_64bits(bytes(b[:16]), 16)
    rest = bytes(b[32:])
    struct.pack_into("<Q", b, 24, xx.XXH3_64bits_withSeed(rest, len(rest), seed))
    return bytes(b)

if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    digest = current_digest(sys.argv[1])
    for f in sys.argv[2:]:
        b = open(f, "rb").read()
        if b[:4] != b"\x7fDWB" or len(b) < 40:
            sys.exit(f"{f}: not a .dwb artifact")
        open(f, "wb").write(restamp(b, digest))
        print(f"{f}: stamped {digest[::-1].hex()}")
