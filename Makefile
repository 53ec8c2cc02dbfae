# raidfs top-level build.
#   make            programs and libraries into build/
#   make test       everything again with ASan/UBSan into build/asan/, then
#                   every unit and integration test
#   make faults     the whole fault matrix and a long repair property run
#                   (not part of make test); the tables go to build/faults/
#   make demo       the first thing a new user runs
#   make bench      the benchmark suite: raidfs beside its peers, into
#                   docs/BENCHMARKS.md (BENCH_QUICK=1: a few minutes; all
#                   settings: bench/run.sh --help).  Not part of make test.
#   make bench-deps installs the peers and tools the suite compares with
#   make bench-micro parity and raidcore micro-benchmarks
#   make bench-online  rebuild, catch-up and scrub figures of a mounted array (bench/online.sh)
#   make deps       installs missing Debian packages (as root)
#   make install    PREFIX=/usr/local DESTDIR=  (layout: docs/DESIGN.md,
#                   "Installed layout"; manual pages in $PREFIX/share/man,
#                   systemd units in SYSTEMDUNITDIR)
#
# Every target first makes sure the Debian packages are installed
# (scripts/deps.sh), then runs the real build in a sub-make: pkg-config is
# asked for flags only once the packages are there, so any target works as
# the first command on a machine that has only git, make and a compiler.

ifndef RAIDFS_INNER_MAKE

.NOTPARALLEL:
.DEFAULT_GOAL := all
GOALS := $(or $(filter-out deps clean bench-deps,$(MAKECMDGOALS)),all)
.PHONY: deps clean bench-deps $(GOALS)

$(GOALS):
	@scripts/deps.sh --check >/dev/null 2>&1 || scripts/deps.sh
	@$(MAKE) --no-print-directory RAIDFS_INNER_MAKE=1 $@

deps:
	scripts/deps.sh

# What the benchmark suite compares raidfs with and measures it by (it
# runs without any of them: a missing peer or tool is skipped): the
# workloads, CPU time of a command, the peers (btrfs also needs the
# kernel's module), the passthrough ceiling's source (libfuse3-dev's
# examples) and the plots.  Then the ceiling is built.
BENCH_PKGS := fio bonnie++ dbench time zfs-fuse btrfs-progs libfuse3-dev fuse3 \
	gnuplot-nox python3 util-linux
bench-deps:
	scripts/deps.sh $(BENCH_PKGS)
	@$(MAKE) --no-print-directory build/bench/ceiling_ll

clean:
	rm -rf build

else  # ---- the real build: packages are installed ---------------------------

# mount(8), mkfs(8) and fsck(8) look for their helpers in /sbin whatever
# the PREFIX; mount.raidfs is a link to the daemon (daemon/daemon.h).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= /sbin
MANDIR ?= $(PREFIX)/share/man
# systemd's own directory for a /usr install (pkg-config systemd), else
# the one under the prefix, which systemd also reads
# (/usr/local/lib/systemd/system)
SYSTEMDUNITDIR ?= $(or $(if $(filter /usr,$(PREFIX)),$(shell \
	pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null)),$(PREFIX)/lib/systemd/system)
DESTDIR ?=

CC ?= cc

# What each layer links, so every program links only what it uses
# (mkfs.raidfs and fsck.raidfs do not link libfuse3).  pkg-config names:
# libmount is "mount" (option strings, the mount table, fstab escapes);
# libudev lists the block devices a scan for an array's members probes.
# source/ links blkid: probe.c, signatures on a device (mkfs, fsck, and
# the mount's check of a device named in SOURCE that is no member).
RC_PKGS := libisal libxxhash uuid
FS_PKGS := libxxhash uuid
SOURCE_PKGS := libconfuse mount uuid libudev blkid
# the daemon's control socket and raidfsctl speak JSON (json-c); the
# daemon also links blkid: raidfsctl add checks what a device holds
CTL_PKGS := json-c mount uuid
pkg_cflags = $(shell pkg-config --cflags $(1))
pkg_libs = $(shell pkg-config --libs $(1))
ALL_PKGS := $(RC_PKGS) $(FS_PKGS) $(SOURCE_PKGS) $(CTL_PKGS) fuse3 blkid
PKG_CFLAGS := $(call pkg_cflags,$(sort $(ALL_PKGS)))

RC_LIBS := $(call pkg_libs,$(RC_PKGS)) -pthread
FS_LIBS := $(call pkg_libs,$(sort $(RC_PKGS) $(FS_PKGS))) -pthread
SOURCE_LIBS := $(call pkg_libs,$(sort $(RC_PKGS) $(FS_PKGS) $(SOURCE_PKGS))) -pthread
DAEMON_LIBS := $(call pkg_libs,$(sort $(RC_PKGS) $(FS_PKGS) $(SOURCE_PKGS) $(CTL_PKGS) fuse3 blkid)) -pthread
CTL_LIBS := $(call pkg_libs,$(CTL_PKGS))
MKFS_LIBS := $(call pkg_libs,$(sort $(RC_PKGS) $(FS_PKGS) $(SOURCE_PKGS) blkid)) -pthread
FSCK_LIBS := $(MKFS_LIBS)

# Folders, bottom up: common <- raidcore (dev/ its member backends) <- fs
# <- source <- daemon, mkfs, fsck; ctl (raidfsctl) shares only the
# protocol of the daemon's control socket (daemon/control_proto.c).
INCLUDES := -Icommon -Iraidcore -Iraidcore/dev -Ifs -Isource -Idaemon -Ictl
WARN := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-unused-parameter
BASE_CFLAGS := -std=gnu11 -g -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 \
	$(INCLUDES) $(WARN) $(PKG_CFLAGS) -pthread
REL_CFLAGS := $(BASE_CFLAGS) -O2
ASAN_CFLAGS := $(BASE_CFLAGS) -O1 -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=undefined

COMMON_SRC := $(wildcard common/*.c)
# The fault-injecting backend is for tests only: it is not in libraidcore.a.
RC_TEST_SRC := raidcore/dev/fault.c
RC_SRC := $(wildcard raidcore/*.c) $(filter-out $(RC_TEST_SRC),$(wildcard raidcore/dev/*.c))
FS_SRC := $(wildcard fs/*.c)
SOURCE_SRC := $(wildcard source/*.c)
DAEMON_SRC := $(wildcard daemon/*.c)
MKFS_SRC := $(wildcard mkfs/*.c)
FSCK_SRC := $(wildcard fsck/*.c)
CTL_SRC := $(wildcard ctl/*.c) daemon/control_proto.c source/prog.c
UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_HELPERS := $(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))
BENCH_SRC := $(wildcard bench/*.c)

PROGS := raidfs mount.raidfs mkfs.raidfs fsck.raidfs raidfsctl

.PHONY: all test test-build unit integration faults demo bench bench-micro bench-online install
all: build/libcommon.a build/libraidcore.a build/libraidfs.a build/libsource.a \
	$(addprefix build/,$(PROGS)) $(patsubst bench/%.c,build/bench/%,$(BENCH_SRC))

# ---- objects, one rule per variant -----------------------------------------
build/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -MMD -MP -c $< -o $@

build/asan/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -MMD -MP -c $< -o $@

objs = $(patsubst %.c,$(1)/obj/%.o,$(2))

# $(1): build directory, $(2): CFLAGS
define variant
$(1)/libcommon.a: $(call objs,$(1),$(COMMON_SRC))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
$(1)/libraidcore.a: $(call objs,$(1),$(RC_SRC))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
$(1)/libraidcore_test.a: $(call objs,$(1),$(RC_TEST_SRC))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
$(1)/libraidfs.a: $(call objs,$(1),$(FS_SRC))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
$(1)/libsource.a: $(call objs,$(1),$(SOURCE_SRC))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
$(1)/raidfs: $(call objs,$(1),$(DAEMON_SRC)) $(1)/libsource.a $(1)/libraidfs.a \
		$(1)/libraidcore.a $(1)/libcommon.a
	$$(CC) $(2) -o $$@ $$^ $(DAEMON_LIBS)
# the daemon under the helper's name (daemon/daemon.h)
$(1)/mount.raidfs: $(1)/raidfs
	ln -sf raidfs $$@
$(1)/mkfs.raidfs: $(call objs,$(1),$(MKFS_SRC)) $(1)/libsource.a $(1)/libraidfs.a \
		$(1)/libraidcore.a $(1)/libcommon.a
	$$(CC) $(2) -o $$@ $$^ $(MKFS_LIBS)
$(1)/fsck.raidfs: $(call objs,$(1),$(FSCK_SRC)) $(1)/libsource.a $(1)/libraidfs.a \
		$(1)/libraidcore.a $(1)/libcommon.a
	$$(CC) $(2) -o $$@ $$^ $(FSCK_LIBS)
$(1)/raidfsctl: $(call objs,$(1),$(CTL_SRC))
	$$(CC) $(2) -o $$@ $$^ $(CTL_LIBS)
endef
$(eval $(call variant,build,$(REL_CFLAGS)))
$(eval $(call variant,build/asan,$(ASAN_CFLAGS)))

build/bench/%: build/obj/bench/%.o build/libraidcore.a build/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -o $@ $^ $(RC_LIBS)

# ---- tests ------------------------------------------------------------------
UNIT_BINS := $(patsubst tests/unit/%.c,build/asan/tests/%,$(UNIT_SRC))
UNIT_HELPER_OBJS := $(patsubst %.c,build/asan/obj/%.o,$(UNIT_HELPERS))

# raidcore's tests link raidcore alone; the filesystem's link both.
RC_TEST_HELPERS := $(filter build/asan/obj/tests/unit/rc_%,$(UNIT_HELPER_OBJS))
FS_TEST_HELPERS := $(filter-out $(RC_TEST_HELPERS),$(UNIT_HELPER_OBJS))
A := build/asan

build/asan/tests/test_%: build/asan/obj/tests/unit/test_%.o $(RC_TEST_HELPERS) \
		$(A)/libraidcore_test.a $(A)/libraidcore.a $(A)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(RC_LIBS) -lcmocka

build/asan/tests/test_common_%: build/asan/obj/tests/unit/test_common_%.o \
		$(A)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ -lcmocka

build/asan/tests/test_fs_%: build/asan/obj/tests/unit/test_fs_%.o $(UNIT_HELPER_OBJS) \
		$(A)/libraidfs.a $(A)/libraidcore_test.a $(A)/libraidcore.a \
		$(A)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(FS_LIBS) -lcmocka

build/asan/tests/test_control_proto: build/asan/obj/tests/unit/test_control_proto.o \
		build/asan/obj/daemon/control_proto.o
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(CTL_LIBS) -lcmocka

build/asan/tests/test_config: build/asan/obj/tests/unit/test_config.o \
		$(FS_TEST_HELPERS) $(A)/libsource.a $(A)/libraidfs.a \
		$(A)/libraidcore.a $(A)/libcommon.a
	@mkdir -p $(dir $@)
	$(CC) $(ASAN_CFLAGS) -o $@ $^ $(SOURCE_LIBS) -lcmocka

# Keep objects make would otherwise delete as intermediate.
.SECONDARY:

# The test programs build one job per CPU; the unit and the integration
# tests then run one after the other (each runner runs its own tests in
# parallel).
test:
	@$(MAKE) --no-print-directory -j$$(nproc) test-build
	@$(MAKE) --no-print-directory unit integration

# raidcore's files call downward only: no cycle in their call graph.
unit: $(UNIT_BINS)
	@python3 tests/unit/rc_calls.py raidcore/*.c raidcore/dev/*.c >/dev/null || \
		python3 tests/unit/rc_calls.py raidcore/*.c raidcore/dev/*.c
	@scripts/run-unit.sh $(UNIT_BINS)

# test tools (tests/tools/*.c: fsx and friends, used by integration tests)
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOLS := $(patsubst tests/tools/%.c,build/tools/%,$(TOOL_SRC))
build/tools/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -o $@ $< -pthread
build/tools/faultfs: tests/tools/faultfs.c
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -o $@ $< $(call pkg_libs,fuse3) -pthread
build/tools/aio_stale: tests/tools/aio_stale.c
	@mkdir -p $(dir $@)
	$(CC) $(REL_CFLAGS) -o $@ $< -laio

integration: all $(addprefix build/asan/,$(PROGS)) $(TOOLS)
	@RAIDFS_BIN=build/asan tests/integration/run.sh

test-build: all $(UNIT_BINS) $(addprefix build/asan/,$(PROGS)) $(TOOLS)

# Every kind of member fault x region x level x member, offline and busy
# (t400 with RAIDFS_FAULTS=full), and the repair property test with many
# iterations and a new seed (t410; RAIDFS_PROPERTY_SEED=N repeats a run),
# and the RAID 6 power cuts with every pair of members missing after every
# cut (make test checks a third of the pairs after each cut, in turn).
# About an hour on 2 cores.  make test runs a sample of each.  One
# reproduces an entry of tests/integration/KNOWN_FAULTS with, e.g.,
#   make faults FAULT_TESTS=t400 RAIDFS_FAULTS=zeros/csum/online/raid5/m1
#   make faults FAULT_TESTS=t420
# and RAIDFS_FAULTS_LOOP=all serves every case's members as loop devices.
FAULTS_DIR := $(CURDIR)/build/faults
FAULT_TESTS ?= t400 t410
RAIDFS_FAULTS ?= full
faults: all $(addprefix build/asan/,$(PROGS)) $(TOOLS) build/asan/tests/test_crash_raid6
	@mkdir -p $(FAULTS_DIR)
	@RAIDFS_CRASH_ALL_PAIRS=1 build/asan/tests/test_crash_raid6
	@RAIDFS_BIN=build/asan RAIDFS_FAULTS="$(RAIDFS_FAULTS)" RAIDFS_TEST_VERBOSE=1 \
		RAIDFS_TEST_TIMEOUT=$${RAIDFS_TEST_TIMEOUT:-14400} \
		RAIDFS_FAULTS_TABLE=$(FAULTS_DIR)/matrix.txt \
		RAIDFS_PROPERTY_TABLE=$(FAULTS_DIR)/property.txt \
		RAIDFS_PROPERTY_ITERS=$${RAIDFS_PROPERTY_ITERS:-100} \
		RAIDFS_PROPERTY_SEED=$${RAIDFS_PROPERTY_SEED:-$$(date +%s)} \
		RAIDFS_FAULTS_LOOP=$${RAIDFS_FAULTS_LOOP:-} \
		tests/integration/run.sh $(FAULT_TESTS)
	@echo "tables: $(FAULTS_DIR)/matrix.txt $(FAULTS_DIR)/property.txt"

demo: all
	scripts/demo.sh

# The suite (bench/run.sh): settings come from the environment or the
# command line (make bench BENCH_QUICK=1 BENCH_ROUNDS=5).  The ceiling is
# libfuse's own passthrough_ll.c, compiled from where libfuse3-dev puts it
# (bench/ceiling/ceiling_ll.c); it is the example's code, so it gets the
# example's warnings, not ours.  Without it the ceiling is skipped.
FUSE_EXAMPLES ?= /usr/share/doc/libfuse3-dev/examples
CEILING := $(if $(wildcard $(FUSE_EXAMPLES)/passthrough_ll.c),build/bench/ceiling_ll)
build/bench/ceiling_ll: bench/ceiling/ceiling_ll.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -Wall -I$(FUSE_EXAMPLES) $(call pkg_cflags,fuse3) -o $@ $< \
		$(call pkg_libs,fuse3) -pthread

bench: all build/tools/fsx build/tools/faultfs $(CEILING)
	@python3 bench/test_report.py
	bench/run.sh

bench-micro: all
	build/bench/bench_parity
	build/bench/bench_array

# issue 9's online figures: rebuild, catch-up, a reader's cost (bench/online.sh)
bench-online: all build/tools/faultfs
	bench/online.sh

# The helper links to the daemon by its final, absolute path: a relative
# link from /sbin breaks where /sbin is itself a link (merged /usr).
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR)
	install -m 755 build/raidfs $(DESTDIR)$(BINDIR)/raidfs
	install -m 755 build/mkfs.raidfs build/fsck.raidfs build/raidfsctl \
		$(DESTDIR)$(SBINDIR)/
	ln -sfn $(BINDIR)/raidfs $(DESTDIR)$(SBINDIR)/mount.raidfs
	ln -sfn $(BINDIR)/raidfs $(DESTDIR)$(SBINDIR)/mount.fuse.raidfs
	install -d $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8
	install -m 644 $(wildcard docs/man/*.5) $(DESTDIR)$(MANDIR)/man5/
	install -m 644 $(wildcard docs/man/*.8) $(DESTDIR)$(MANDIR)/man8/
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g' systemd/raidfs-scrub@.service.in \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/raidfs-scrub@.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/raidfs-scrub@.service
	install -m 644 systemd/raidfs-scrub@.timer $(DESTDIR)$(SYSTEMDUNITDIR)/

-include $(shell find build -name '*.d' 2>/dev/null)

endif
