# raidfs top-level build.
#   make            programs and libraries into build/
#   make test       everything again with ASan/UBSan into build/asan/, then
#                   every unit and integration test
#   make demo       the first thing a new user runs
#   make bench      benchmarks
#   make deps       installs missing Debian packages (as root)
#   make install    PREFIX=/usr/local DESTDIR=

PREFIX ?= /usr/local
SBINDIR ?= /sbin
DESTDIR ?=

CC ?= cc
PKGS := libisal libxxhash fuse3 libconfuse uuid blkid
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-unused-parameter
BASE_CFLAGS := -std=gnu11 -g -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
	-Iraidcore -Ifs $(WARN) $(PKG_CFLAGS) -pthread
REL_CFLAGS := $(BASE_CFLAGS) -O2
ASAN_CFLAGS := $(BASE_CFLAGS) -O1 -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined
LDLIBS := $(PKG_LIBS) -pthread

RC_SRC := $(wildcard raidcore/*.c)
# fs/ is a library except for the programs' main files.
FS_MAIN := $(wildcard fs/*_main.c)
FS_SRC := $(filter-out $(FS_MAIN),$(wildcard fs/*.c))
MKFS_SRC := $(wildcard mkfs/*.c)
FSCK_SRC := $(wildcard fsck/*.c)
ADMIN_SRC := $(wildcard admin/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_HELPERS := $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))
BENCH_SRC := $(wildcard bench/*.c)

# Programs: name -> main source (only those whose sources exist).
PROGS :=
ifneq ($(wildcard fs/raidfs_main.c),)
PROGS += raidfs
endif
ifneq ($(wildcard fs/mount_main.c),)
PROGS += mount.raidfs
endif
ifneq ($(MKFS_SRC),)
PROGS += mkfs.raidfs
endif
ifneq ($(FSCK_SRC),)
PROGS += fsck.raidfs
endif
ifneq ($(ADMIN_SRC),)
PROGS += raidfs-admin
endif

.PHONY: all test unit integration demo bench deps install clean check-deps
all: check-deps build/libraidcore.a build/libraidfs.a \
	$(addprefix build/,$(PROGS)) $(patsubst bench/%.c,build/bench/%,$(BENCH_SRC))

check-deps:
	@scripts/deps.sh --check >/dev/null 2>&1 || scripts/deps.sh

deps:
	scripts/deps.sh

# ---- objects, one rule per variant -----------------------------------------
build/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -MMD -MP -c $< -o $@

build/asan/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -MMD -MP -c $< -o $@

define libs_for
$(1)/libraidcore.a: $(patsubst %.c,$(1)/obj/%.o,$(RC_SRC))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
$(1)/libraidfs.a: $(patsubst %.c,$(1)/obj/%.o,$(FS_SRC))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
$(1)/raidfs: $(1)/obj/fs/raidfs_main.o $(1)/libraidfs.a $(1)/libraidcore.a
	$$(CC) $(2) -o $$@ $$^ $(LDLIBS)
$(1)/mount.raidfs: $(1)/obj/fs/mount_main.o $(1)/libraidfs.a $(1)/libraidcore.a
	$$(CC) $(2) -o $$@ $$^ $(LDLIBS)
$(1)/mkfs.raidfs: $(patsubst %.c,$(1)/obj/%.o,$(MKFS_SRC)) $(1)/libraidfs.a $(1)/libraidcore.a
	$$(CC) $(2) -o $$@ $$^ $(LDLIBS)
$(1)/fsck.raidfs: $(patsubst %.c,$(1)/obj/%.o,$(FSCK_SRC)) $(1)/libraidfs.a $(1)/libraidcore.a
	$$(CC) $(2) -o $$@ $$^ $(LDLIBS)
$(1)/raidfs-admin: $(patsubst %.c,$(1)/obj/%.o,$(ADMIN_SRC)) $(1)/libraidfs.a $(1)/libraidcore.a
	$$(CC) $(2) -o $$@ $$^ $(LDLIBS)
endef
$(eval $(call libs_for,build,$(REL_CFLAGS)))
$(eval $(call libs_for,build/asan,$(ASAN_CFLAGS)))

build/bench/%: build/obj/bench/%.o build/libraidfs.a build/libraidcore.a
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -o $@ $^ $(LDLIBS)

# ---- tests ------------------------------------------------------------------
UNIT_BINS := $(patsubst tests/unit/%.c,build/asan/tests/%,$(UNIT_SRC))
UNIT_HELPER_OBJS := $(patsubst %.c,build/asan/obj/%.o,$(UNIT_HELPERS))

# raidcore's tests link raidcore alone; the filesystem's link both.
RC_TEST_HELPERS := $(filter build/asan/obj/tests/unit/rc_%,$(UNIT_HELPER_OBJS))
FS_TEST_HELPERS := $(filter-out $(RC_TEST_HELPERS),$(UNIT_HELPER_OBJS))

build/asan/tests/test_%: build/asan/obj/tests/unit/test_%.o $(RC_TEST_HELPERS) \
		build/asan/libraidcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

build/asan/tests/test_fs_%: build/asan/obj/tests/unit/test_fs_%.o $(UNIT_HELPER_OBJS) \
		build/asan/libraidfs.a build/asan/libraidcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

build/asan/tests/test_config: build/asan/obj/tests/unit/test_config.o \
		$(FS_TEST_HELPERS) build/asan/libraidfs.a build/asan/libraidcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(LDLIBS) -lcmocka

# Keep objects make would otherwise delete as intermediate.
.SECONDARY:

test: check-deps unit integration

unit: $(UNIT_BINS)
	@scripts/run-unit.sh $(UNIT_BINS)

integration: all $(addprefix build/asan/,$(PROGS))
	@if [ -x tests/integration/run.sh ]; then \
		RAIDFS_BIN=build/asan tests/integration/run.sh; fi

demo: all
	scripts/demo.sh

bench: all
	@for b in $(patsubst bench/%.c,build/bench/%,$(BENCH_SRC)); do $$b || exit 1; done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(SBINDIR)
	for p in $(PROGS); do \
		case $$p in mount.*|mkfs.*|fsck.*) \
			install -m 755 build/$$p $(DESTDIR)$(SBINDIR)/$$p ;; \
		*) install -m 755 build/$$p $(DESTDIR)$(PREFIX)/bin/$$p ;; esac; \
	done

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)

# ---- test tools (tests/tools/*.c: fsx and friends, used by integration tests)
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOLS := $(patsubst tests/tools/%.c,build/tools/%,$(TOOL_SRC))
build/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -o $@ $< $(LDLIBS)
integration: $(TOOLS)
