# dwc - the Dogwood policy toolchain.  Plain GNU make, out-of-tree objects in build/.
#   make            build/dwc, build/libdogwood.a, build/libdogwood.so
#   make demo       install deps, build, run the Box example through the VM
#   make test       install deps, build, run every suite (ends with "N passed, N failed")
#   make conformance  Cedar's conformance corpus only
CC      ?= cc
BUILD   ?= build
CSTD     = -std=c11 -D_GNU_SOURCE
WARN     = -Wall -Wextra -Werror -Wno-unused-parameter
OPT     ?= -O2 -g
CFLAGS  += $(CSTD) $(WARN) $(OPT) -fPIC -I$(BUILD)/gen -I.
LDLIBS  += -lxxhash -lm
DEBIAN_PKGS = flex bison libcjson-dev libxxhash-dev libcmocka-dev libseccomp-dev libz3-dev clang

# Library sources: every layer except the drivers (files named *_main.c).
LIB_DIRS = stdlib lang compiler vm runtime
LIB_SRCS = $(filter-out %_main.c,$(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
GEN_SRCS = $(BUILD)/gen/lang/lexer.c $(BUILD)/gen/lang/parser.c
LIB_OBJS = $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) \
           $(BUILD)/obj/gen/lexer.o $(BUILD)/obj/gen/parser.o

.PHONY: all deps demo test conformance clean unit fuzz
all: $(BUILD)/dwc $(BUILD)/libdogwood.a $(BUILD)/libdogwood.so $(BUILD)/dw-conformance

# ---- generated front end ----
$(BUILD)/gen/lang/parser.c $(BUILD)/gen/lang/parser.h: lang/parser.y
	@mkdir -p $(dir $@)
	bison -Wall -Werror --defines=$(BUILD)/gen/lang/parser.h -o $(BUILD)/gen/lang/parser.c $<
$(BUILD)/gen/lang/lexer.c $(BUILD)/gen/lang/lexer.h: lang/lexer.l
	@mkdir -p $(dir $@)
	flex --header-file=$(BUILD)/gen/lang/lexer.h -o $(BUILD)/gen/lang/lexer.c $<
$(BUILD)/obj/gen/%.o: $(BUILD)/gen/lang/%.c $(BUILD)/gen/lang/parser.h $(BUILD)/gen/lang/lexer.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-unused-function -Wno-sign-compare -Ilang -c $< -o $@

$(BUILD)/obj/%.o: %.c $(BUILD)/gen/lang/parser.h $(BUILD)/gen/lang/lexer.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@
-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

$(BUILD)/libdogwood.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/libdogwood.so: $(LIB_OBJS)
	$(CC) -shared -o $@ $^ $(LDLIBS)

$(BUILD)/dwc: $(BUILD)/obj/runtime/dwc_main.o $(BUILD)/libdogwood.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/dw-conformance: $(BUILD)/obj/conformance/conformance_main.o $(BUILD)/libdogwood.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# ---- dependencies (Debian packages, installed only when missing) ----
deps:
	@missing=""; for p in $(DEBIAN_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing) >/dev/null || \
	  { echo "apt-get failed for:$$missing" >&2; exit 1; }; fi

# ---- conformance ----
CORPUS_DIR ?= $(BUILD)/corpus
SHARED ?= $(firstword $(wildcard ../shared) $(wildcard ../../shared))
$(CORPUS_DIR)/.unpacked:
	@mkdir -p $(CORPUS_DIR)
	tar xzf $(SHARED)/conformance/cedar/corpus-tests.tar.gz -C $(CORPUS_DIR)
	ln -sfn $(abspath $(SHARED))/conformance/cedar/tests $(CORPUS_DIR)/tests
	ln -sfn $(abspath $(SHARED))/conformance/cedar/sample-data $(CORPUS_DIR)/sample-data
	@touch $@
conformance: deps all $(CORPUS_DIR)/.unpacked
	$(BUILD)/dw-conformance $(CORPUS_DIR)

clean:
	rm -rf $(BUILD)
