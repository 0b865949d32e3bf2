# Compilers, flags, the GPU architecture and the compile rules, shared by every stage's Makefile
# and by tests/Makefile (each sets BUILD first). An object's path under $(BUILD) is its source's
# path from the repository root: build/common/gpu.o comes from ../common/gpu.c.
#
# ARCH: the GPU architecture(s) to build for, e.g. `make ARCH=sm_80` or `make ARCH="sm_80 sm_90"`.
# Left unset, it is read from the GPU (nvidia-smi); with no GPU (as in CI) the build targets
# sm_75, sm_80, sm_86, sm_89 and sm_90, plus PTX for newer GPUs.

comma := ,
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
export ARCH ARCH_SOURCE

# Each architecture sm_ and a number; the newest by number (100 is newer than 90), for the PTX.
ARCH_LIST := $(subst $(comma), ,$(ARCH))
ifneq ($(or $(if $(ARCH_LIST),,empty),$(shell printf '%s\n' $(ARCH_LIST) | grep -Evx 'sm_[0-9]+')),)
  $(error ARCH must name architectures like sm_90 or "sm_80 sm_90", got '$(ARCH)')
endif
ARCH_NEWEST := $(shell printf '%s\n' $(ARCH_LIST:sm_%=%) | sort -n | tail -n 1)
GENCODE := $(foreach a,$(ARCH_LIST),-gencode arch=compute_$(a:sm_%=%),code=$(a)) \
           -gencode arch=compute_$(ARCH_NEWEST),code=compute_$(ARCH_NEWEST)

# cuDNN, optional: a stage that measures it sets USES_CUDNN := 1. Found in the first of these places
# (a header folder with cudnn.h, then a library folder with libcudnn.so) that has both: CUDNN_HOME's
# include/ and lib64/ or lib/ when it is set, and only there; otherwise the CUDA toolkit, the
# system's packages (Debian's and Ubuntu's libcudnn*-dev), and PyTorch's pip wheel (nvidia/cudnn).
ifdef USES_CUDNN
  MULTIARCH := $(shell uname -m)-linux-gnu
  ifdef CUDNN_HOME
    CUDNN_PLACES := $(CUDNN_HOME)/include:$(CUDNN_HOME)/lib64 $(CUDNN_HOME)/include:$(CUDNN_HOME)/lib
    CUDNN_SEARCHED := CUDNN_HOME=$(CUDNN_HOME)
  else
    CUDNN_WHEEL := $(shell python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0])' 2>/dev/null)
    CUDNN_PLACES := $(CUDA_HOME)/include:$(CUDA_HOME)/lib64 /usr/include/$(MULTIARCH):/usr/lib/$(MULTIARCH) \
                    /usr/include:/usr/lib/$(MULTIARCH) $(if $(CUDNN_WHEEL),$(CUDNN_WHEEL)/include:$(CUDNN_WHEEL)/lib)
    CUDNN_SEARCHED := the CUDA toolkit, /usr/include, PyTorch's wheel; set CUDNN_HOME
  endif
  cudnn_lib_in = $(firstword $(wildcard $(1)/libcudnn.so $(1)/libcudnn.so.[0-9]*))
  cudnn_place = $(and $(wildcard $(firstword $(subst :, ,$(1)))/cudnn.h),$(call cudnn_lib_in,$(lastword $(subst :, ,$(1)))))
  CUDNN_FOUND := $(firstword $(foreach p,$(CUDNN_PLACES),$(if $(call cudnn_place,$(p)),$(p))))
endif
ifneq ($(CUDNN_FOUND),)
  CUDNN_LIB := $(call cudnn_lib_in,$(lastword $(subst :, ,$(CUDNN_FOUND))))
  CUDNN_FLAGS := -DHAVE_CUDNN -I$(firstword $(subst :, ,$(CUDNN_FOUND)))
  CUDNN_LDLIBS := -Xlinker $(CUDNN_LIB) -Xlinker -rpath -Xlinker $(dir $(CUDNN_LIB))
  CUDNN_STATUS := with cuDNN ($(CUDNN_LIB))
else ifdef USES_CUDNN
  CUDNN_STATUS := without cuDNN (no cudnn.h with a libcudnn.so in: $(CUDNN_SEARCHED))
endif

CC ?= gcc
CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Wshadow -I$(CUDA_HOME)/include -MMD -MP $(CUDNN_FLAGS)
NVCCFLAGS := -std=c++17 -O3 -lineinfo $(GENCODE) -Xcompiler -Wall -MMD -MP $(CUDNN_FLAGS) $(NVCC_EXTRA)
LDLIBS := -lm -lpthread $(CUDNN_LDLIBS)

COMMON_SRCS := check.c cli.c inputs.c reference.c verify.c gpu.c report.c bench.c stage.c gpu_kernels.cu \
               dtype.c npy.c outfile.c topk.c topk_bench.c host_threads.c sample.c
COMMON_OBJS := $(patsubst %,$(BUILD)/common/%.o,$(basename $(COMMON_SRCS)))

# $(BUILD)/arch.txt holds the compilers, the -gencode and cuDNN flags and NVCC_EXTRA; it changes only
# when they do, and every object depends on it, so a new ARCH (or NVCC, CC, CUDNN_HOME, NVCC_EXTRA)
# rebuilds everything and an unchanged one rebuilds nothing (an empty NVCC_EXTRA adds nothing to it,
# not even a space).
ARCH_STAMP := $(BUILD)/arch.txt
STAMP_TEXT := $(NVCC) $(CC) $(GENCODE) $(CUDNN_FLAGS)$(if $(NVCC_EXTRA), $(NVCC_EXTRA))
$(shell mkdir -p $(BUILD); echo '$(STAMP_TEXT)' | cmp -s - $(ARCH_STAMP) || echo '$(STAMP_TEXT)' > $(ARCH_STAMP))

$(BUILD)/%.o: $(ROOT)/%.c $(ARCH_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@
$(BUILD)/%.o: $(ROOT)/%.cu $(ARCH_STAMP)
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@
