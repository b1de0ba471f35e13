# dwc - the Dogwood policy toolchain.  Plain GNU make, out-of-tree objects in build/.
#   make            build/dwc, build/dwd, build/libdogwood.a, build/libdogwood.so (-> .so.1 -> .so.1.x.y)
#   make install    PREFIX=/usr/local DESTDIR= (make uninstall); tests/lib/run.sh checks it
#   make demo       install deps, build, run the Box example through the VM
#   make test       install deps, build, run every suite (ends with "N passed, N failed")
#   make conformance  Cedar's conformance corpus only
CC      ?= cc
BUILD   ?= build
CSTD     = -std=c11 -D_GNU_SOURCE
WARN     = -Wall -Wextra -Werror -Wno-unused-parameter
# gcc's format-truncation guesses are noise for our bounded snprintf uses; clang lacks the flag
ifeq ($(findstring clang,$(CC)),)
WARN    += -Wno-format-truncation
endif
OPT     ?= -O2 -g
CFLAGS  += $(CSTD) $(WARN) $(OPT) -fPIC -I$(BUILD)/gen -I.
# PROVIDERS=0: a build without information providers (dogwood.md §13.6): any provider call is
# a compile error, "information providers are not enabled in this build"
ifeq ($(PROVIDERS),0)
CFLAGS  += -DDW_NO_PROVIDERS
endif
# -licuuc: dwc check's Unicode tables (compiler/lint_run.c: in libdogwood.a, not in the .so)
LDLIBS  += -lxxhash -lm -licuuc
DEBIAN_PKGS = flex bison libxxhash-dev libcmocka-dev libseccomp-dev libz3-dev clang
# dwc check's Unicode hygiene: ICU's character properties (Bidi_Control, Default_Ignorable_Code_Point)
DEBIAN_PKGS += libicu-dev
# tests/lib/run.sh: pkg-config for the installed library, man-db/groff to render the pages
DEBIAN_PKGS += pkgconf man-db groff-base

# Library sources: every layer except the drivers (files named *_main.c).
LIB_DIRS = stdlib lang compiler vm runtime
LIB_SRCS = $(filter-out %_main.c runtime/alloc_count.c,$(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
GEN_SRCS = $(BUILD)/gen/lang/lexer.c $(BUILD)/gen/lang/parser.c
LIB_OBJS = $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) \
           $(BUILD)/obj/gen/lexer.o $(BUILD)/obj/gen/parser.o $(BUILD)/obj/gen/stdlib_macros.o \
           $(BUILD)/obj/gen/box_actions.o

.PHONY: all deps demo test conformance clean unit fuzz bench difftest formatdiff check-deps check-test-deps print-shared
all: $(BUILD)/dwc $(BUILD)/dwd $(BUILD)/libdogwood.a $(BUILD)/libdogwood.so $(BUILD)/dw-conformance

# ---- what the build needs, checked before anything runs ----
# tool-or-header:package pairs; a missing one stops the build with "run make deps"
# instead of "make: flex: No such file or directory" halfway through.
BUILD_DEPS = flex:flex bison:bison xxhash.h:libxxhash-dev seccomp.h:libseccomp-dev z3.h:libz3-dev unicode/uchar.h:libicu-dev
TEST_DEPS  = cmocka.h:libcmocka-dev
define check_deps
	@missing=""; for d in $(1); do x=$${d%%:*}; p=$${d#*:}; \
	  case $$x in \
	    *.h) printf '#include <%s>\n' $$x | $(CC) $(CFLAGS) -E -x c - >/dev/null 2>&1 || missing="$$missing $$x ($$p)" ;; \
	    *)   command -v $$x >/dev/null 2>&1 || missing="$$missing $$x ($$p)" ;; \
	  esac; done; \
	if [ -n "$$missing" ]; then echo "error: missing:$$missing" >&2; \
	  echo "  run \`make deps\` first (installs the Debian packages named above), then make again" >&2; exit 1; fi
endef
check-deps:
	@command -v $(firstword $(CC)) >/dev/null 2>&1 || { echo "error: no C compiler \`$(CC)\`; run \`make deps\` or set CC=" >&2; exit 1; }
	$(call check_deps,$(BUILD_DEPS))
check-test-deps: check-deps
	$(call check_deps,$(TEST_DEPS))
# goals that install the packages first check after installing
ifneq ($(filter deps test demo conformance bench difftest formatdiff,$(MAKECMDGOALS)),)
check-deps: deps
endif

# ---- generated front end ----
$(BUILD)/gen/lang/parser.c $(BUILD)/gen/lang/parser.h &: lang/parser.y | check-deps
	@mkdir -p $(dir $@)
	bison -Wall -Werror --defines=$(BUILD)/gen/lang/parser.h -o $(BUILD)/gen/lang/parser.c $<
$(BUILD)/gen/lang/lexer.c $(BUILD)/gen/lang/lexer.h &: lang/lexer.l | check-deps
	@mkdir -p $(dir $@)
	flex --header-file=$(BUILD)/gen/lang/lexer.h -o $(BUILD)/gen/lang/lexer.c $<
# Text embedded as C strings: the standard macro library (written in Dogwood)
# and Box's action schema (`--schema box`).  embed NAME SOURCE
define embed
	@mkdir -p $(dir $@)
	{ echo '#include <stddef.h>'; echo 'const char $(1)_text[] = {'; \
	  od -An -v -tx1 $(2) | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '0 };'; \
	  echo 'const size_t $(1)_len = sizeof $(1)_text - 1;'; } > $@
endef
$(BUILD)/gen/stdlib_macros.c: stdlib/macros.dw
	$(call embed,dw_stdlib_macros,$<)
$(BUILD)/gen/box_actions.c: lang/box_actions.cedarschema
	$(call embed,dw_box_actions_schema,$<)
$(BUILD)/obj/gen/stdlib_macros.o $(BUILD)/obj/gen/box_actions.o: $(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/obj/gen/%.o: $(BUILD)/gen/lang/%.c | $(BUILD)/gen/lang/parser.h $(BUILD)/gen/lang/lexer.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -Wno-unused-function -Wno-sign-compare -Ilang -c $< -o $@

# lang/parse_build.c includes bison's header, whose %code requires names lang/'s headers bare
$(BUILD)/obj/lang/parse_build.o: CFLAGS += -Ilang
# generated headers are order-only: -MMD records who really includes them
$(BUILD)/obj/%.o: %.c | $(BUILD)/gen/lang/parser.h $(BUILD)/gen/lang/lexer.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# Only what runtime/dogwood.h declares is visible outside the shared library;
# hidden symbols still link from the static archive (dwc, dwd, tests).
$(LIB_OBJS): CFLAGS += -fvisibility=hidden
# the library's objects are rebuilt when their flags change (a build tree
# from before -fvisibility=hidden would otherwise export everything)
$(BUILD)/obj/lib-cflags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(CC) $(CFLAGS)' | cmp -s - $@ || echo '$(CC) $(CFLAGS)' > $@
$(LIB_OBJS): $(BUILD)/obj/lib-cflags
.PHONY: FORCE
$(BUILD)/libdogwood.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^
# `dwc check`'s proofs (Z3) are linked into dwc only, not into the shared library or dwd
PROVE_OBJS = $(BUILD)/obj/compiler/smt.o $(BUILD)/obj/compiler/smt_expr.o $(BUILD)/obj/compiler/smt_model.o $(BUILD)/obj/compiler/smt_wire.o $(BUILD)/obj/compiler/smt_worker.o \
             $(BUILD)/obj/compiler/prove.o $(BUILD)/obj/compiler/prove_guard.o $(BUILD)/obj/compiler/prove_scope.o $(BUILD)/obj/compiler/prove_report.o $(BUILD)/obj/compiler/prove_cache.o $(BUILD)/obj/runtime/check.o

# ---- the shared library: libdogwood.so.MAJOR, exporting dogwood.h only ----
# The release is defined once, in runtime/dogwood.h (DW_VERSION_MAJOR/MINOR/PATCH).
dw_version_part = $(shell sed -n 's/^[#]define DW_VERSION_$(1) \([0-9][0-9]*\)$$/\1/p' runtime/dogwood.h)
VERSION_MAJOR := $(call dw_version_part,MAJOR)
VERSION := $(VERSION_MAJOR).$(call dw_version_part,MINOR).$(call dw_version_part,PATCH)
SONAME = libdogwood.so.$(VERSION_MAJOR)
SO_REAL = libdogwood.so.$(VERSION)
# dwc's and dwd's own modules stay out: the proofs (Z3), the benchmark (it
# counts allocations through runtime/alloc_count.c), dwd's protocol, socket,
# connection I/O, decision-log writer, policy compiling child, keeper and seccomp confinement, dwc's replay driver,
# trace checker, test runner, explain printer and reference commands (dogwood_cli, validate_files), and
# dwc check's findings filters, and its lint driver and Unicode rules, and dwc lsp (runtime/lsp*.c)
# (compiler/lint_run.c, ICU's tables); compiler/lint*.c's rules stay in: the
# loader's Box profile runs them.
SO_EXCLUDE = $(PROVE_OBJS) $(addprefix $(BUILD)/obj/runtime/,bench.o dwd_protocol.o dwd_dlog.o dwd_socket.o dwd_conn.o dwd_policy.o keeper.o seccomp.o replay.o trace_box.o dwtest.o dwtest_report.o explain_cmd.o dogwood_cli.o validate_files.o \
    check_filter.o check_set.o check_lint.o) $(BUILD)/obj/compiler/lint_run.o \
    $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard runtime/lsp*.c))
# ... and the formatter (`dwc format`: ICU's character widths)
SO_EXCLUDE += $(BUILD)/obj/runtime/format_cmd.o $(addprefix $(BUILD)/obj/lang/,fmt_cst.o fmt_doc.o format.o format_dw.o format_check.o)
# ... and Cedar's JSON policy format and `dwc dogwood lower` (runtime/est_read.c escapes by ICU's tables)
SO_EXCLUDE += $(addprefix $(BUILD)/obj/runtime/,est_read.o est_write.o translate_cmd.o check_parse_cmd.o dogwood_lower.o dogwood_schema.o mcp_schema.o)
# ... and `dwc evaluate` and `dwc new` (Cedar's display of values escapes by ICU's tables too)
SO_EXCLUDE += $(addprefix $(BUILD)/obj/runtime/,rust_escape.o cedar_value.o eval_error.o ext_error.o expression.o evaluate_cmd.o new_cmd.o)
# -z defs: nothing left undefined (sanitizer runtimes come from the executable)
SO_DEFS = $(if $(findstring -fsanitize,$(OPT)),,-Wl,-z,defs)
$(BUILD)/$(SO_REAL): $(filter-out $(SO_EXCLUDE),$(LIB_OBJS)) runtime/libdogwood.map
	$(CC) $(OPT) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=runtime/libdogwood.map $(SO_DEFS) \
	    -o $@ $(filter %.o,$^) $(LDLIBS) -lpthread
$(BUILD)/libdogwood.so: $(BUILD)/$(SO_REAL)
	ln -sfn $(SO_REAL) $(BUILD)/$(SONAME)
	ln -sfn $(SONAME) $@

$(BUILD)/dwc: $(BUILD)/obj/runtime/dwc_main.o $(BUILD)/obj/runtime/alloc_count.o $(BUILD)/libdogwood.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -lz3
# dwd: the decision service (runtime/dwd_main.c); libseccomp confines it after setup.
# It serves compiled artifacts only (runtime/engine_open.h) and links from an
# archive without the front end: the parser and lexer, the macro library and
# expander, the schema and event-schema parsers, the compiler, type checker,
# lint and proofs, and the engine's source-text opening (engine_source.c).
# A serving object that reached for one would fail the link;
# tests/dwd/no_front_end.sh checks the binary's symbols besides.
FRONT_END_OBJS = $(filter $(BUILD)/obj/compiler/%,$(LIB_OBJS)) \
    $(BUILD)/obj/gen/lexer.o $(BUILD)/obj/gen/parser.o $(BUILD)/obj/gen/stdlib_macros.o \
    $(addprefix $(BUILD)/obj/lang/,parse_build.o schema.o schema_text.o schema_json.o eventschema.o eventschema_derive.o) \
    $(addprefix $(BUILD)/obj/runtime/,load.o engine_source.o links.o check.o check_filter.o check_set.o)
$(BUILD)/libdogwood-serve.a: $(filter-out $(FRONT_END_OBJS),$(LIB_OBJS))
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/dwd: $(BUILD)/obj/runtime/dwd_main.o $(BUILD)/libdogwood-serve.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) -lseccomp -lpthread
$(BUILD)/dw-conformance: $(BUILD)/obj/conformance/conformance_main.o $(BUILD)/libdogwood.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# ---- install: make install [PREFIX=/usr/local] [DESTDIR=] ; make uninstall ----
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
LIBDIR = $(DESTDIR)$(PREFIX)/lib
INCDIR = $(DESTDIR)$(PREFIX)/include
MANDIR = $(DESTDIR)$(PREFIX)/share/man
MAN_PAGES = $(BUILD)/man/dwc.1 $(BUILD)/man/dwd.8 $(BUILD)/man/dogwood.3
# the pages carry the release and its date from this one place
$(BUILD)/man/%: docs/man/% runtime/dogwood.h
	@mkdir -p $(dir $@)
	sed -e 's/@VERSION@/$(VERSION)/g' $< > $@
$(BUILD)/dogwood.pc: runtime/dogwood.pc.in runtime/dogwood.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's/@VERSION@/$(VERSION)/g' $< > $@
# PREFIX is baked into dogwood.pc: rebuild it whenever install runs
.PHONY: install uninstall $(BUILD)/dogwood.pc
install: $(BUILD)/dwc $(BUILD)/dwd $(BUILD)/libdogwood.a $(BUILD)/libdogwood.so $(BUILD)/dogwood.pc $(MAN_PAGES)
	install -d $(BINDIR) $(LIBDIR)/pkgconfig $(INCDIR) $(MANDIR)/man1 $(MANDIR)/man3 $(MANDIR)/man8
	install -m 755 $(BUILD)/dwc $(BUILD)/dwd $(BINDIR)/
	ln -sfn dwc $(BINDIR)/dogwood
	install -m 755 $(BUILD)/$(SO_REAL) $(LIBDIR)/
	ln -sfn $(SO_REAL) $(LIBDIR)/$(SONAME)
	ln -sfn $(SONAME) $(LIBDIR)/libdogwood.so
	install -m 644 $(BUILD)/libdogwood.a $(LIBDIR)/
	install -m 644 runtime/dogwood.h $(INCDIR)/dogwood.h
	install -m 644 $(BUILD)/dogwood.pc $(LIBDIR)/pkgconfig/dogwood.pc
	install -m 644 $(BUILD)/man/dwc.1 $(MANDIR)/man1/
	install -m 644 $(BUILD)/man/dogwood.3 $(MANDIR)/man3/
	install -m 644 $(BUILD)/man/dwd.8 $(MANDIR)/man8/
uninstall:
	rm -f $(BINDIR)/dwc $(BINDIR)/dogwood $(BINDIR)/dwd $(LIBDIR)/$(SO_REAL) $(LIBDIR)/$(SONAME) $(LIBDIR)/libdogwood.so \
	    $(LIBDIR)/libdogwood.a $(INCDIR)/dogwood.h $(LIBDIR)/pkgconfig/dogwood.pc \
	    $(MANDIR)/man1/dwc.1 $(MANDIR)/man3/dogwood.3 $(MANDIR)/man8/dwd.8

# ---- dependencies (Debian packages, installed only when missing) ----
deps:
	@missing=""; for p in $(DEBIAN_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) >/dev/null || \
	  { echo "apt-get failed for:$$missing" >&2; exit 1; }; fi

# ---- conformance ----
CORPUS_DIR ?= $(BUILD)/corpus
# the read-only shared directory: beside this checkout (CI), or beside the
# repository a temporary clone was made from (git clone . $$(mktemp -d))
CLONED_FROM := $(shell git config --get remote.origin.url 2>/dev/null)
SHARED ?= $(firstword $(wildcard ../shared) $(wildcard ../../shared) $(if $(CLONED_FROM),$(wildcard $(CLONED_FROM)/../shared)))
# the shared directory found above, for scripts that need the same one (tests/campaign.sh)
print-shared:
	@echo $(SHARED)
$(CORPUS_DIR)/.unpacked:
	@test -n "$(SHARED)" || { echo "error: no shared directory (spec, examples, Cedar conformance files) at ../shared; run make SHARED=/path/to/shared ..."; exit 1; }
	@mkdir -p $(CORPUS_DIR)
	tar xzf $(SHARED)/conformance/cedar/corpus-tests.tar.gz -C $(CORPUS_DIR)
	ln -sfn $(abspath $(SHARED))/conformance/cedar/tests $(CORPUS_DIR)/tests
	ln -sfn $(abspath $(SHARED))/conformance/cedar/sample-data $(CORPUS_DIR)/sample-data
	@touch $@
conformance: deps all $(CORPUS_DIR)/.unpacked
	$(BUILD)/dw-conformance $(CORPUS_DIR)

clean:
	rm -rf $(BUILD)

# ---- tests ----
UNIT_SRCS = $(wildcard tests/unit/test_*.c)
UNIT_BINS = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(BUILD)/obj/runtime/alloc_count.o $(BUILD)/libdogwood.a | check-test-deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/obj/runtime/alloc_count.o $(BUILD)/libdogwood.a $(LDLIBS) -lcmocka
# test_engine_faults fails chosen allocations: the library's malloc family is
# wrapped (-Wl,--wrap) into the test-only tests/unit/alloc_fail.c
ALLOC_WRAP = -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
$(BUILD)/tests/test_engine_faults: tests/unit/test_engine_faults.c tests/unit/alloc_fail.c tests/unit/alloc_fail.h $(BUILD)/libdogwood.a | check-test-deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< tests/unit/alloc_fail.c $(BUILD)/libdogwood.a $(LDLIBS) -lcmocka -lpthread $(ALLOC_WRAP)
$(BUILD)/dw-golden: $(BUILD)/obj/tests/golden/golden_main.o $(BUILD)/libdogwood.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)
# The interpreter's plain `switch` dispatch (-DDW_NO_JUMP_TABLE: compilers without computed
# goto), so it cannot rot unbuilt: only vm/interp.c differs, and its object is linked ahead
# of the library's copy.  make test runs the conformance corpus through it.
$(BUILD)/obj/nojt/vm/interp.o: vm/interp.c | $(BUILD)/gen/lang/parser.h $(BUILD)/gen/lang/lexer.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DDW_NO_JUMP_TABLE -MMD -MP -c $< -o $@
$(BUILD)/nojt/dw-conformance: $(BUILD)/obj/conformance/conformance_main.o $(BUILD)/obj/nojt/vm/interp.o $(BUILD)/libdogwood.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/tests/test_work_bound: tests/bench/join_policies.h
unit: $(UNIT_BINS)
testbins: all unit $(BUILD)/dw-golden $(BUILD)/nojt/dw-conformance

SAN_OPT = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_TARGETS = $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/libdogwood.a $(wildcard tests/fuzz/*.h tests/unit/*.h)
	clang $(CSTD) -Wall -Wextra -Werror -Wno-unused-parameter -I. -Ibuild/fuzz/gen -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -o $@ $< build/fuzz/libdogwood.a $(LDLIBS) -lseccomp -lpthread
.PHONY: testbins fuzz-link benchbins
# The library is rebuilt with clang and fuzzer instrumentation in build/fuzz.
fuzz:
	$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang OPT="-O1 -g -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined" build/fuzz/libdogwood.a
	$(MAKE) --no-print-directory fuzz-link
fuzz-link: $(FUZZ_TARGETS)

# make test builds its four variants with every core (.ci/run calls plain `make test`: a serial build
# of them was a quarter of CI's time); TEST_JOBS=1 builds one file at a time.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test: deps
	$(MAKE) --no-print-directory -j$(TEST_JOBS) testbins benchbins
	$(MAKE) --no-print-directory -j$(TEST_JOBS) BUILD=build/asan OPT="$(SAN_OPT)" testbins
	$(MAKE) --no-print-directory -j$(TEST_JOBS) BUILD=build/noprov PROVIDERS=0 build/noprov/dwc build/noprov/dwd
	$(MAKE) --no-print-directory -j$(TEST_JOBS) fuzz
	$(MAKE) --no-print-directory $(CORPUS_DIR)/.unpacked
	ASAN_OPTIONS=detect_leaks=1:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1:exitcode=99 tests/run_all.sh $(SHARED)

# Differential testing against Cedar (@cedar-policy/cedar-wasm from npm): make difftest N=100000
N ?= 10000
difftest: deps all $(CORPUS_DIR)/.unpacked
	tests/diff/run.sh $(N)
	DIFF_SUITE=templates tests/diff/run.sh $(or $(TEMPLATE_N),10000)
	DIFF_SUITE=est tests/diff/run.sh 1
	DIFF_SUITE=schema tests/diff/run.sh 1

# dwc format against Cedar's formatter (cedar-wasm) over every Cedar policy set of the
# corpus, the repository and the shared dir (make test runs a sample: tests/format/run.sh)
formatdiff: deps all $(CORPUS_DIR)/.unpacked
	tests/format/run.sh $(BUILD)/dwc $(SHARED) 1

# Benchmarks print figures; they are never pass/fail tests.  Writes docs/PERFORMANCE.md.
$(BUILD)/temporal_bench: tests/bench/temporal_bench.c tests/bench/bench_util.h tests/bench/join_policies.h $(BUILD)/libdogwood.a
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libdogwood.a $(LDLIBS) -lpthread
# dwd over the socket: the loopback load generator (tests/bench/dwd_load.c)
$(BUILD)/bench/dwd_load: tests/bench/dwd_load.c tests/bench/bench_util.h tests/dwd/wire.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< -lpthread
# Every benchmark program, so none can rot unbuilt: make test compiles them (and runs none).
$(BUILD)/bench/histlog_bench: tests/bench/histlog_bench.c tests/bench/bench_util.h $(BUILD)/libdogwood.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libdogwood.a $(LDLIBS) -lpthread
$(BUILD)/bench/reopen_bench: tests/bench/reopen_bench.c tests/bench/bench_util.h $(BUILD)/libdogwood.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libdogwood.a $(LDLIBS) -lpthread
$(BUILD)/bench/load_bench: tests/bench/load_bench.c tests/bench/bench_util.h $(BUILD)/libdogwood.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(BUILD)/libdogwood.a $(LDLIBS) -lpthread
$(BUILD)/bench/clock_probe: tests/bench/clock_probe.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $<
BENCH_BINS = $(BUILD)/temporal_bench $(BUILD)/bench/dwd_load $(BUILD)/bench/load_bench \
             $(BUILD)/bench/histlog_bench $(BUILD)/bench/reopen_bench $(BUILD)/bench/clock_probe
benchbins: $(BENCH_BINS)
# run.sh measures every section (VM and from-json against Cedar, scaling, compile/load,
# temporal rules, dwd) and report.js writes the file only if each has its table.
bench: deps all $(BENCH_BINS)
	DWC=$(BUILD)/dwc LOAD_BENCH=$(BUILD)/bench/load_bench TEMPORAL_BENCH=$(BUILD)/temporal_bench \
	  CLOCK_PROBE=$(BUILD)/bench/clock_probe DWD_BIN=$(BUILD)/dwd DWD_LOAD=$(BUILD)/bench/dwd_load tests/bench/run.sh $(SHARED)

demo: deps all $(BUILD)/dwd-demo
	@echo "== compiling and deciding Box's example requests through the VM"
	@for d in $(SHARED)/examples/box/0[1-4]*/; do \
	  echo "-- $$d"; \
	  $(BUILD)/dwc authorize -p $$d/policy.dw -s $(SHARED)/spec/box/actions.cedarschema --requests $$d/requests.jsonl; \
	done
	@echo "== disassembly of $(SHARED)/examples/box/01-project-read/policy.dw"
	@$(BUILD)/dwc disasm -p $(SHARED)/examples/box/01-project-read/policy.dw
	@echo "== dwd: a scripted agent session over the socket (tests/dwd/demo.sh)"
	@tests/dwd/demo.sh $(BUILD)/dwd $(BUILD)/dwd-demo $(SHARED)
# the demo's client: prints each verdict, its rule and the decision-log line
$(BUILD)/dwd-demo: tests/dwd/demo_client.c tests/dwd/wire.h
	$(CC) $(CFLAGS) -o $@ $<
