# Compilers, flags, the GPU architecture and the compile rules, shared by every stage's Makefile
# and by tests/Makefile (each sets BUILD first). An object's path under $(BUILD) is its source's
# path from the repository root: build/common/gpu.o comes from ../common/gpu.c.
#
# ARCH: the GPU architecture(s) to build for, e.g. `make ARCH=sm_80` or `make ARCH="sm_80 sm_90"`.
# Left unset, it is read from the GPU (nvidia-smi); with no GPU (as in CI) the build targets
# sm_75, sm_80, sm_86, sm_89 and sm_90, plus PTX for newer GPUs.

COMMON_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
ROOT := $(patsubst %/common,%,$(COMMON_DIR))

NVCC ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc))
ifeq ($(NVCC),)
  $(error nvcc not found: install the CUDA toolkit (12.0 or newer) and put its bin/ on PATH)
endif
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))

ifeq ($(origin ARCH),undefined)
  GPU_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '. ')
  ifneq ($(GPU_CC),)
    ARCH := sm_$(GPU_CC)
    ARCH_SOURCE := detected from the GPU
  else
    ARCH := sm_75 sm_80 sm_86 sm_89 sm_90
    ARCH_SOURCE := no GPU found: default
  endif
endif
ifeq ($(origin ARCH),environment)
  ARCH_SOURCE ?= set in the environment
endif
ARCH_SOURCE ?= set on the command line

# Each architecture sm_ and a number (arch.mk); the newest by number (100 is newer than 90), for the
# PTX.
include $(COMMON_DIR)/arch.mk
export ARCH ARCH_SOURCE
ARCH_NEWEST := $(shell printf '%s\n' $(ARCH_LIST:sm_%=%) | sort -n | tail -n 1)
GENCODE := $(foreach a,$(ARCH_LIST),-gencode arch=compute_$(a:sm_%=%),code=$(a)) \
           -gencode arch=compute_$(ARCH_NEWEST),code=compute_$(ARCH_NEWEST)

# Libraries a stage measures beside its own kernels: the stage's Makefile names, in LIBRARY_MK, the
# files that find them from CUDA_HOME; each adds to LIBRARY_FLAGS (to compile), LIBRARY_LDLIBS (to
# link), LIBRARY_STATUS (a few words for the link line) and LIBRARY_STAMP (what else, when it
# changes, rebuilds), adding nothing to the first two where its library is absent.
ifdef LIBRARY_MK
  include $(LIBRARY_MK)
endif

CC ?= gcc
CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Wshadow -I$(CUDA_HOME)/include -MMD -MP $(LIBRARY_FLAGS)
NVCCFLAGS := -std=c++17 -O3 -lineinfo $(GENCODE) -Xcompiler -Wall -MMD -MP $(LIBRARY_FLAGS) $(NVCC_EXTRA)
LDLIBS := -lm -lpthread $(LIBRARY_LDLIBS)

COMMON_SRCS := check.c cli.c inputs.c reference.c verify.c gpu.c report.c bench.c stage.c gpu_kernels.cu \
               outfile.c host_threads.c
COMMON_OBJS := $(patsubst %,$(BUILD)/common/%.o,$(basename $(COMMON_SRCS)))

# $(BUILD)/arch.txt holds the compilers, the -gencode and library flags, LIBRARY_STAMP and NVCC_EXTRA; it changes only
# when they do, and every object depends on it, so a new ARCH (or NVCC, CC, library, NVCC_EXTRA)
# rebuilds everything and an unchanged one rebuilds nothing (an empty NVCC_EXTRA adds nothing to it,
# not even a space). Make reads it ($(file <), no shell) and its rule rewrites it only when the text
# differs (or it is missing), so make -n prints the rewrite and changes no file. The rule is not the
# default goal: that stays the first target of the Makefile that includes this one.
ARCH_STAMP := $(BUILD)/arch.txt
STAMP_TEXT := $(NVCC) $(CC) $(GENCODE) $(LIBRARY_FLAGS)$(if $(NVCC_EXTRA), $(NVCC_EXTRA))$(if $(LIBRARY_STAMP), $(LIBRARY_STAMP))
STAMP_NOW := $(file <$(ARCH_STAMP))
stamp_default_goal := $(.DEFAULT_GOAL)
$(ARCH_STAMP): $(if $(and $(findstring $(STAMP_TEXT),$(STAMP_NOW)),$(findstring $(STAMP_NOW),$(STAMP_TEXT))),,FORCE)
	@mkdir -p $(@D)
	@printf '%s\n' '$(subst ','\'',$(STAMP_TEXT))' > $@
.PHONY: FORCE
FORCE:

# What a run's CSV header names of the code it measured (common/report.c): CODE, the checkout's `git
# describe --always --dirty` ("unknown" without git; `make CODE=...` names it where the tree has no
# .git), and SOURCES, the hash of the stage's own source files, whose rule lives in
# plots/make_plots.sh (--sources), so that make plots recomputes it the same way on the files of
# today ("none" outside a stage's folder). Both are compiled into report.o alone; $(BUILD)/code.txt
# holds them and, like arch.txt, is rewritten only when they change, so a new commit or an edited
# source rebuilds report.o and relinks, nothing more.
ifeq ($(origin CODE),undefined)
  CODE := $(or $(shell git -C '$(ROOT)' describe --always --dirty 2>/dev/null),unknown)
endif
SOURCES_STAGE := $(filter 01_% 02_% 03_% 04_% 05_% 06_%,$(lastword $(subst /, ,$(CURDIR))))
SOURCES := $(or $(if $(SOURCES_STAGE),$(shell sh '$(ROOT)/plots/make_plots.sh' --sources $(SOURCES_STAGE))),none)
CODE_STAMP := $(BUILD)/code.txt
CODE_TEXT := $(CODE) $(SOURCES)
CODE_NOW := $(file <$(CODE_STAMP))
$(CODE_STAMP): $(if $(and $(findstring $(CODE_TEXT),$(CODE_NOW)),$(findstring $(CODE_NOW),$(CODE_TEXT))),,FORCE)
	@mkdir -p $(@D)
	@printf '%s\n' '$(CODE_TEXT)' > $@
$(BUILD)/common/report.o: $(CODE_STAMP)
$(BUILD)/common/report.o: CFLAGS += -DCOURSE_CODE='"$(CODE)"' -DCOURSE_SOURCES='"$(SOURCES)"'
.DEFAULT_GOAL := $(stamp_default_goal)

$(BUILD)/%.o: $(ROOT)/%.c $(ARCH_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@
# FIRST_INCLUDES: header folders searched before every other (a library's newer CCCL, given to its one
# object as a target-specific variable, ahead of the toolkit's).
$(BUILD)/%.o: $(ROOT)/%.cu $(ARCH_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(FIRST_INCLUDES) $(NVCCFLAGS) -c $< -o $@
