#!/usr/bin/env bash
# tests/lib/run.sh [BUILD] [SHARED] - libdogwood as an embedder gets it:
# `make install PREFIX=/usr DESTDIR=$tmp`, then the installed files, the
# shared library's SONAME, exports and undefined symbols, a C program built
# with nothing but pkg-config's flags (sysroot $tmp), the same through
# dlopen() and statically (Libs.private), the Python bindings (unittest) and
# the Rust bindings (cargo test --offline), which must decide Box's example
# events exactly as the C API does; the man pages render; dwc --version,
# dwd --version, dw_version(), dogwood.pc and SARIF agree on one release;
# make uninstall removes every file.  Ends with "N passed, N failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
B=${1:-build}
SHARED=$(cd "${2:-$root/../shared}" && pwd)
cd "$root" || exit 1
case $B in /*) ;; *) B=$root/$B ;; esac
pass=0 fail=0
T=$(mktemp -d "${TMPDIR:-/tmp}/dw-lib.XXXXXX")
trap 'rm -rf "$T"' EXIT
check() {   # check NAME CMD...
    local name=$1; shift
    if "$@" >"$T/check.out" 2>&1; then pass=$((pass + 1)); echo "ok   $name"
    else fail=$((fail + 1)); echo "FAIL $name"; sed 's/^/     /' "$T/check.out" | head -20; fi
}
D=$T/root
P=$D/usr
VERSION=$(for k in MAJOR MINOR PATCH; do sed -n "s/^#define DW_VERSION_$k \([0-9]*\)$/\1/p" runtime/dogwood.h; done | paste -sd.)
MAJOR=${VERSION%%.*}

# a parent make's jobserver and flags (make test) are not ours to inherit
unset MAKEFLAGS MFLAGS MAKELEVEL
check "make install PREFIX=/usr DESTDIR=..." make --no-print-directory -s BUILD="$B" install PREFIX=/usr DESTDIR="$D"
installed_files() {
    for f in bin/dwc bin/dwd lib/libdogwood.so.$VERSION lib/libdogwood.a include/dogwood.h \
             lib/pkgconfig/dogwood.pc share/man/man1/dwc.1 share/man/man8/dwd.8 share/man/man3/dogwood.3; do
        [ -f "$P/$f" ] || { echo "missing $f"; return 1; }
    done
    [ "$(readlink "$P/lib/libdogwood.so.$MAJOR")" = "libdogwood.so.$VERSION" ] || { echo "libdogwood.so.$MAJOR"; return 1; }
    [ "$(readlink "$P/lib/libdogwood.so")" = "libdogwood.so.$MAJOR" ] || { echo "libdogwood.so link"; return 1; }
}
check "installed files and links (libdogwood.so -> .so.$MAJOR -> .so.$VERSION)" installed_files
check "bin/dogwood -> dwc answers as the reference's command set (dogwood.md §18)" \
    sh -c "[ \"\$(readlink '$P/bin/dogwood')\" = dwc ] && '$P/bin/dogwood' check-parse tests/traces/appendix-b.dw | grep -q 'policy 0: 1 temporal leaf'"
SO=$P/lib/libdogwood.so.$VERSION
check "SONAME libdogwood.so.$MAJOR" sh -c "readelf -d '$SO' | grep -q 'Library soname: \[libdogwood.so.$MAJOR\]'"

# exports: exactly the functions the installed header declares, all dw_, version DOGWOOD_1
declared() { cc -E -P -x c "$P/include/dogwood.h" | grep -oE '\bdw_[a-z0-9_]+ *\(' | tr -d ' (' | sort -u; }
exported() { nm -D --defined-only "$SO" | awk '$3 != "DOGWOOD_1" {print $3}' | sed 's/@@DOGWOOD_1$//' | sort -u; }
exports_ok() {
    declared > "$T/declared"; exported > "$T/exported"
    [ -s "$T/declared" ] || { echo "no declarations found"; return 1; }
    diff "$T/declared" "$T/exported" || return 1
    nm -D --defined-only "$SO" | awk '$3 != "DOGWOOD_1"' | grep -v '@@DOGWOOD_1$' && { echo "unversioned exports"; return 1; }
    echo "$(wc -l < "$T/exported") exports"
}
check "the .so exports only dogwood.h's dw_ functions (version DOGWOOD_1)" exports_ok
no_undefined() {
    ldd -r "$SO" 2>&1 | grep -i 'undefined symbol' && return 1
    nm -D --undefined-only "$SO" | grep -E 'dw_|alloc_count' && return 1
    return 0
}
check "no undefined symbols (ldd -r), no bench code (dw_alloc_count)" no_undefined
check "the header has only opaque engine types (no struct dw_value)" sh -c "! grep -qE 'struct dw_(value|uid)' '$P/include/dogwood.h'"
cxx_links() {   # without extern "C" the C++ names would be mangled and the link would fail
    printf '#include <dogwood.h>\n#include <cstdio>\nint main() { std::puts(dw_version()); return dw_cause_name(DW_CAUSE_PERMITTED)[0] != 0x70; }\n' > "$T/cxx.cc"
    # shellcheck disable=SC2046
    c++ -Wall -Wextra -Werror -o "$T/cxx" "$T/cxx.cc" $(pkg-config --cflags --libs dogwood) && LD_LIBRARY_PATH=$P/lib "$T/cxx"
}

# the C API through pkg-config (sysroot pointed at the DESTDIR)
export PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_LIBDIR=$P/lib/pkgconfig PKG_CONFIG_PATH=
check "a C++ program includes and links it (extern \"C\")" cxx_links
CFLAGS_T="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1"
# shellcheck disable=SC2046,SC2086
check "cc prog.c \$(pkg-config --cflags --libs dogwood)" cc $CFLAGS_T -o "$T/box_events" tests/lib/box_events.c $(pkg-config --cflags --libs dogwood)
# shellcheck disable=SC2046,SC2086
check "the dlopen() build (header only, -ldl)" cc $CFLAGS_T -DDW_DLOPEN -o "$T/box_dlopen" tests/lib/box_events.c $(pkg-config --cflags dogwood) -ldl
# shellcheck disable=SC2046,SC2086
check "the static build (libdogwood.a + Libs.private)" cc $CFLAGS_T -o "$T/box_static" tests/lib/box_events.c \
    $(pkg-config --cflags dogwood) -L"$P/lib" -Wl,-Bstatic -ldogwood -Wl,-Bdynamic $(pkg-config --static --libs-only-l dogwood | sed 's/-ldogwood//')
export LD_LIBRARY_PATH=$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
run_c() {   # run_c BIN OUT [ARGS]: its own checks pass, nothing on stderr
    local bin=$1 out=$2; shift 2
    "$bin" "$SHARED/examples/box" "$out" "$@" >"$T/run.out" 2>"$T/run.err" || { cat "$T/run.out" "$T/run.err"; return 1; }
    tail -1 "$T/run.out" | grep -Eq '^[1-9][0-9]* passed, 0 failed$' || { cat "$T/run.out"; return 1; }
    [ ! -s "$T/run.err" ] || { echo "stderr:"; cat "$T/run.err"; return 1; }
    tail -1 "$T/run.out"
}
check "linked through the .so: Box's examples decide as expected, errors as text" run_c "$T/box_events" "$T/c.out"
check "the .so is what it ran on (ldd)" sh -c "ldd '$T/box_events' | grep -q '$P/lib/libdogwood.so.$MAJOR'"
same_as_c() { run_c "$@" >/dev/null && cmp "$T/c.out" "$2"; }
check "dlopen(): the same verdicts, internal names hidden" same_as_c "$T/box_dlopen" "$T/dlopen.out" "$P/lib/libdogwood.so.$MAJOR"
check "static (libdogwood.a): the same verdicts" same_as_c "$T/box_static" "$T/static.out"

# the structures the bindings mirror, as the C compiler lays them out
DW_ABI_SIZES=
cat > "$T/abi.c" <<'C'
#include <dogwood.h>
#include <stdio.h>
#define S(t) printf(#t "=%zu ", sizeof(t))
int main(void) { S(dw_engine_config); S(dw_verdict); S(dw_engine_durable); S(dw_engine_recovery); S(dw_reload_info); S(dw_engine_stats); return 0; }
C
# shellcheck disable=SC2046
cc -o "$T/abi" "$T/abi.c" $(pkg-config --cflags dogwood) && DW_ABI_SIZES=$("$T/abi")
check "the C layout of the mirrored structures ($DW_ABI_SIZES)" test -n "${DW_ABI_SIZES:-}"
export DW_ABI_SIZES=${DW_ABI_SIZES:-} DW_EXAMPLES=$SHARED/examples/box DWC=$B/dwc DWD=$B/dwd

python_tests() {
    DOGWOOD_LIB=$P/lib/libdogwood.so.$MAJOR DW_VERDICTS_OUT=$T/py.out PYTHONDONTWRITEBYTECODE=1 \
        python3 -m unittest discover -s runtime/bindings/python/tests 2>&1 | tail -4
    [ "${PIPESTATUS[0]}" -eq 0 ] && cmp "$T/c.out" "$T/py.out"
}
check "Python bindings (unittest): same verdicts as the C API, durable, reload, dwd client" python_tests
rust_tests() {
    (cd runtime/bindings/rust && CARGO_TARGET_DIR=$B/cargo DOGWOOD_LIB_DIR=$P/lib DW_VERDICTS_OUT=$T/rs.out \
        cargo test --offline -q 2>&1 | grep -E 'test result|FAILED|panicked|error' | head -20; exit "${PIPESTATUS[0]}") &&
        cmp "$T/c.out" "$T/rs.out"
}
check "Rust bindings (cargo test --offline): same verdicts as the C API, durable, reload, dwd client" rust_tests

render() {   # render PAGE SECTION...: man -l renders it, warning-free, with these sections
    local page=$1; shift
    MANWIDTH=80 man -l "$page" >"$T/page.txt" 2>"$T/page.err" || return 1
    [ ! -s "$T/page.err" ] || { cat "$T/page.err"; return 1; }
    for s in NAME SYNOPSIS DESCRIPTION "$@" EXAMPLES "SEE ALSO"; do grep -q "^$s" "$T/page.txt" || { echo "no $s"; return 1; }; done
    grep -q "dwc $VERSION" "$T/page.txt" || { echo "no version"; return 1; }
}
check "man -l dwc.1" render "$P/share/man/man1/dwc.1" OPTIONS "EXIT STATUS" FILES
check "man -l dwd.8" render "$P/share/man/man8/dwd.8" OPTIONS "EXIT STATUS" FILES
check "man -l dogwood.3" render "$P/share/man/man3/dogwood.3" "RETURN VALUE" "THREAD SAFETY" FILES

one_version() {
    local sarif
    printf 'permit(principal, action, resource);\n' > "$T/v.dw"
    sarif=$("$P/bin/dwc" check "$T/v.dw" --format sarif | sed -n 's/^          "version": "\(.*\)",$/\1/p')
    printf '%s\n' "$("$P/bin/dwc" --version)" "$("$P/bin/dwd" --version)" "dw_version $(DOGWOOD_LIB=$P/lib/libdogwood.so.$MAJOR python3 -c 'import sys; sys.path.insert(0, "runtime/bindings/python"); import dogwood; print(dogwood.version())')" \
        "pkg-config $(pkg-config --modversion dogwood)" "sarif $sarif" | tee "$T/versions"
    [ "$(awk '{print $2}' "$T/versions" | sort -u)" = "$VERSION" ] && [ "$(wc -l < "$T/versions")" -eq 5 ]
}
check "dwc --version, dwd --version, dw_version(), dogwood.pc and SARIF: one release ($VERSION)" one_version
check "LICENSE (Apache-2.0) and CHANGELOG.md ($VERSION)" sh -c "grep -q 'Apache License' LICENSE && grep -q 'Version 2.0' LICENSE && grep -q '^## $VERSION' CHANGELOG.md"

check "make uninstall removes every installed file" sh -c "make --no-print-directory -s BUILD='$B' uninstall PREFIX=/usr DESTDIR='$D' && [ -z \"\$(find '$D' ! -type d)\" ]"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
