# softmax, from the kernel that overflows to a fused softmax + top-K.
# `make help` lists the targets and variables.

STAGES := $(patsubst %/,%,$(sort $(wildcard 0[1-6]_*/)))
# stage1 -> 01_naive, stage2 -> 02_multipass, ...
stage_dir = $(filter 0$(1)_%,$(STAGES))

# Debian/Ubuntu packages for what the tests and plots need.
DEPS_PACKAGES := libcriterion-dev gnuplot-nox
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

# (stageN is a pattern rule, so it is not listed as phony: make skips pattern rules for those)
.PHONY: all help stage test-build test stress sanitize profile sass fuzz plots reproduce deps clean $(STAGES)

all: $(STAGES)

help:
	@echo "Targets:"
	@echo "  make stageN && ./run   build stage N (1-6) and run its default experiment"
	@echo "                         (./run is the stage built last; 'cd 0N_* && make && ./run' works too)"
	@echo "  make                   build every stage: $(STAGES)"
	@echo "  make test              build and run the Criterion tests (GPU tests skip with no GPU)"
	@echo "  make stress            the random sweep of every stage, STRESS_CASES cases a stage from a fresh seed"
	@echo "                         (printed; SWEEP_SEED=S make stress runs that seed again; needs a GPU)"
	@echo "  make sanitize          every stage under compute-sanitizer memcheck, racecheck, synccheck (needs a GPU;"
	@echo "                         STAGE=N: stage N alone)"
	@echo "  make profile STAGE=N   Nsight Compute on stage N's headline case: throughput, memory, occupancy,"
	@echo "                         launch and warp-stall sections of each of its kernels (needs a GPU and ncu)"
	@echo "  make sass STAGE=N      the machine code (SASS) the compiler made of stage N's kernels (cuobjdump)"
	@echo "  make fuzz              the .npy reader and the command line under libFuzzer, FUZZ_SECONDS each (needs clang)"
	@echo "  make plots             regenerate charts and the tables in EXPERIMENTS.md and README.md from the runs in"
	@echo "                         plots/data/<gpu>/, one folder for each GPU (no GPU needed)"
	@echo "  make reproduce         every stage's default experiment on this machine's GPU, its CSVs written to"
	@echo "                         plots/data/<gpu>/ (the other GPUs' folders untouched), then make plots"
	@echo "                         (needs a GPU; about 9 minutes on an H200)"
	@echo "  make deps              install Criterion and gnuplot (apt-get; sudo when not root)"
	@echo "  make clean             remove build outputs"
	@echo "Variables:"
	@echo "  ARCH=sm_90             GPU architecture(s), e.g. ARCH=sm_80 or ARCH=\"sm_80 sm_90\";"
	@echo "                         default: read from the GPU, or sm_75..sm_90 when there is none"
	@echo "  NVCC=/path/to/nvcc     the CUDA compiler (default: nvcc on PATH, then /usr/local/cuda)"
	@echo "  NVCC_EXTRA=-Xptxas=-v  extra nvcc flags, e.g. the register and shared-memory report"
	@echo "  CODE=a67d67c           the code a CSV header names (default: git describe --always --dirty;"
	@echo "                         give it where the tree has no .git)"
	@echo "  FUZZ_SECONDS=60        how long make fuzz runs each fuzz target; FUZZ_CC=clang: its compiler"
	@echo "  STRESS_CASES=10000     cases a stage in make stress (make test runs 1000, from seed 2026)"

$(STAGES):
	$(MAKE) -C $@

# clean beside a build in one command (make -j8 clean stage4) would race with it: one at a time then.
ifneq ($(filter clean,$(MAKECMDGOALS)),)
.NOTPARALLEL:
endif

stage:
	@echo "make stageN builds stage N, 1 to 6 (make stage1 ... make stage6)"; exit 2

stage%:
	$(if $(call stage_of,$*),,$(error no stage $* in this checkout (stages: $(STAGES))))
	$(MAKE) -C $(call stage_of,$*)
	ln -sfn $(call stage_of,$*)/run run

# The test program, beside the stages it runs. Criterion is needed to build it; if it is missing,
# install it first.
test-build: $(STAGES)
	@echo '#include <criterion/criterion.h>' | $(CC) -E -x c - >/dev/null 2>&1 || $(MAKE) deps
	$(MAKE) -C tests

test: test-build
	tests/build/run_tests --verbose

# The random sweep of tests/test_sweep.c (tests/sweep.h), longer than in make test and from a fresh
# seed, which it prints first: a failure is run again with SWEEP_SEED=<that seed> make stress, or one
# case alone as the failure's message says.
STRESS_CASES ?= 10000
stress: test-build
	@seed=$${SWEEP_SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}; \
	echo "stress: SWEEP_SEED=$$seed SWEEP_CASES=$(STRESS_CASES)"; \
	SWEEP_SEED=$$seed SWEEP_CASES=$(STRESS_CASES) tests/build/run_tests --verbose --filter 'sweep/stage*'

# compute-sanitizer on every stage at small shapes, and on the tests of stage 06's rare rows.
sanitize: test-build
	STAGE=$(STAGE) tests/sanitize.sh

# make profile STAGE=N: Nsight Compute on stage N's headline case (PROFILE_ARGS_N: the shape and
# variant its README discusses), every kernel of the variant in the verification run and in one
# timed run, with the sections the course reads: GPU Speed Of Light (memory and compute throughput),
# Memory Workload Analysis (the bytes at each level), Occupancy, Launch Statistics (registers,
# shared memory, grid) and Warp State Statistics (why warps stall). The harness's own kernels (the
# ceilings' and the L2 flush: read_sweep_kernel, tile_copy_kernel) are left out. make sass STAGE=N:
# the SASS of the stage's own kernels, as compiled for ARCH, with their names demangled.
NCU ?= ncu
CUOBJDUMP ?= cuobjdump
PROFILE_ARGS_1 := --n 100M
PROFILE_ARGS_2 := --n 100M --variant multipass
PROFILE_ARGS_3 := --n 100M --variant fused
PROFILE_ARGS_4 := --n 100M --variant fused_warp
PROFILE_ARGS_5 := --rows 8192 --cols 50257 --variant online_rows
PROFILE_ARGS_6 := --rows 8192 --cols 50257 --k 50 --variant fast
NCU_SECTIONS := SpeedOfLight MemoryWorkloadAnalysis Occupancy LaunchStats WarpStateStats
# STAGE and the tool, checked with the variables below, before anything is built.
chosen_stage = $(call stage_of,$(value STAGE))

profile:
	$(MAKE) -C $(chosen_stage)
	cd $(chosen_stage) && $(NCU) --clock-control none $(NCU_SECTIONS:%=--section %) \
	    --kernel-name 'regex:^(?!read_sweep|tile_copy)' ./run $(PROFILE_ARGS_$(STAGE)) --iters 1 --warmup 0

sass:
	$(MAKE) -C $(chosen_stage)
	cd $(chosen_stage) && for cu in $$(find . -name '*.cu' -not -path './build/*' | sort); do \
	    cu=$${cu#./}; $(CUOBJDUMP) -sass build/$(chosen_stage)/$${cu%.cu}.o > build/sass.txt && c++filt < build/sass.txt || exit 1; \
	done; rm -f build/sass.txt

# The fuzz targets of tests/fuzz/, each from its corpus. libFuzzer comes with clang (Debian: the
# clang package); it is there when FUZZ_CC links an empty target with -fsanitize=fuzzer.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
HAVE_LIBFUZZER = $(shell echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' | \
                   $(FUZZ_CC) -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null && echo yes)
fuzz:
	$(if $(HAVE_LIBFUZZER),,$(error make fuzz needs clang with libFuzzer (-fsanitize=fuzzer), and FUZZ_CC=$(FUZZ_CC) has none))
	$(MAKE) -C tests fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_CC=$(FUZZ_CC)

# The variables a target takes, checked when make reads this file, before anything is built: one
# line and exit 2. Each is checked by make itself, as it was written ($(value): unexpanded), and no
# shell sees it before it passes: a value that would run something (`...`, $(...)) is refused, not
# run.
empty :=
space := $(empty) $(empty)
# $(1) with each digit replaced by $(2).
each_digit = $(subst 0,$(2),$(subst 1,$(2),$(subst 2,$(2),$(subst 3,$(2),$(subst 4,$(2),$(subst 5,$(2),$(subst 6,$(2),$(subst 7,$(2),$(subst 8,$(2),$(subst 9,$(2),$(1)))))))))))
# $(1) when it is digits and nothing else (no sign, no space), else nothing.
whole = $(if $(filter xx,x$(call each_digit,$(1),)x),$(1))
# Something when $(1) is a whole number of 1 or more: its digits other than 0.
positive = $(subst 0,,$(call whole,$(1)))
# The largest number tests/sweep.c reads (strtoull: 2^64 - 1), and whether the whole number $(1)
# is past it: its leading zeros dropped, more digits, or as many and later in sorted order.
SWEEP_MOST := 18446744073709551615
sans_zeros = $(if $(filter 0%,$(1)),$(call sans_zeros,$(patsubst 0%,%,$(1))),$(1))
too_large = $(call past_most,$(call sans_zeros,$(1)),$(call each_digit,$(call sans_zeros,$(1)),x$(space)))
past_most = $(or $(word 21,$(2)),$(and $(word 20,$(2)),$(filter-out $(SWEEP_MOST),$(lastword $(sort $(1) $(SWEEP_MOST))))))
# The folder of stage $(1), one digit from 1 to 6; nothing for anything else.
stage_of = $(call stage_dir,$(filter 1 2 3 4 5 6,$(call whole,$(1))))
# The program $(1) as the shell finds it: a path that exists, or a name in a folder of PATH.
find_program = $(if $(findstring /,$(1)),$(wildcard $(1)),$(if $(1),$(firstword $(wildcard $(addsuffix /$(1),$(subst :, ,$(PATH)))))))

# ARCH and CODE as common/build.mk checks them, here too so that a bad one is refused in one line
# before a stage's make starts.
ifneq ($(origin ARCH)$(origin CODE),undefinedundefined)
  include common/arch.mk
endif
ifneq ($(filter sanitize,$(MAKECMDGOALS)),)
  $(if $(value STAGE),$(if $(chosen_stage),,$(error make sanitize STAGE=$(value STAGE): give a stage, 1 to 6, or no STAGE for all)))
endif
ifneq ($(filter profile sass,$(MAKECMDGOALS)),)
  $(if $(chosen_stage),,$(error make $(firstword $(filter profile sass,$(MAKECMDGOALS))) needs STAGE=N, N one of 1 to 6))
endif
ifneq ($(filter profile,$(MAKECMDGOALS)),)
  $(if $(call find_program,$(firstword $(NCU))),,$(error make profile: $(NCU) not found (Nsight Compute has it: NCU=/path/to/ncu)))
endif
ifneq ($(filter sass,$(MAKECMDGOALS)),)
  $(if $(call find_program,$(firstword $(CUOBJDUMP))),,$(error make sass: $(CUOBJDUMP) not found (the CUDA toolkit has it: CUOBJDUMP=/path/to/cuobjdump)))
endif
ifneq ($(filter stress,$(MAKECMDGOALS)),)
  $(if $(call positive,$(value STRESS_CASES)),,$(error make stress: STRESS_CASES=$(value STRESS_CASES): give a whole number of cases, 1 or more))
  $(if $(call too_large,$(value STRESS_CASES)),$(error make stress: STRESS_CASES=$(value STRESS_CASES): too large, the largest is $(SWEEP_MOST)))
  $(if $(value SWEEP_SEED),$(if $(call whole,$(value SWEEP_SEED)),,$(error make stress: SWEEP_SEED=$(value SWEEP_SEED): give a whole number)))
  $(if $(call too_large,$(value SWEEP_SEED)),$(error make stress: SWEEP_SEED=$(value SWEEP_SEED): too large, the largest is $(SWEEP_MOST)))
endif
ifneq ($(filter fuzz,$(MAKECMDGOALS)),)
  $(if $(call positive,$(value FUZZ_SECONDS)),,$(error make fuzz: FUZZ_SECONDS=$(value FUZZ_SECONDS): give a whole number of seconds, 1 or more))
endif

plots:
	@command -v gnuplot >/dev/null || $(MAKE) deps
	sh plots/make_plots.sh

# make reproduce: plots/reproduce.sh builds every stage, runs each one's default experiment into
# plots/data/<gpu>/ (the folder named from this machine's GPU) and then runs make plots.
reproduce:
	bash plots/reproduce.sh

deps:
	@if command -v apt-get >/dev/null && { [ -z "$(SUDO)" ] || command -v sudo >/dev/null; }; then \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEPS_PACKAGES); \
	else \
	  echo "please install Criterion (Debian/Ubuntu: libcriterion-dev) and gnuplot (gnuplot-nox)"; exit 1; \
	fi

clean:
	for s in $(STAGES); do $(MAKE) -C $$s clean; done
	$(MAKE) -C tests clean
	rm -f run
