# CCCL 3.6 or newer, whose CUB's DeviceBatchedTopK takes rows longer than one block (its cluster
# backend, which ties to the lower index also need; 3.5's is one block a row): stage 06's
# `library` variant is built with it when found (LIBRARY_MK in build.mk), read by
# 06_fused_topk/Makefile and tests/Makefile. Found in the first of these with CCCL_VERSION >= 3006000:
# CCCL_HOME when it is set, and only there (a CCCL checkout or an install prefix); otherwise the CUDA
# toolkit, then the pip packages cuda-cccl and flashinfer-python (which ships CCCL's headers).
# Its headers are given to library_topk.cu alone; every other file keeps the toolkit's CUB.
cccl_layouts = $(1)/include/cccl:$(1)/include/cccl:$(1)/include/cccl $(1)/include:$(1)/include:$(1)/include \
               $(1)/cub:$(1)/libcudacxx/include:$(1)/thrust $(1)/headers/include:$(1)/headers/include:$(1)/headers/include
cccl_version_of = $(shell sed -n 's/^\#define CCCL_VERSION \([0-9]*\).*/\1/p' $(word 2,$(subst :, ,$(1)))/cuda/std/__cccl/version.h 2>/dev/null)
ifdef CCCL_HOME
  CCCL_ROOTS := $(CCCL_HOME)
  CCCL_SEARCHED := CCCL_HOME=$(CCCL_HOME)
else
  CCCL_WHEELS := $(shell python3 -c 'import importlib.util as u; [print(list(s.submodule_search_locations)[0] + p) for n, p in (("cuda.cccl", ""), ("flashinfer", "/data/cccl")) for s in [u.find_spec(n) if u.find_spec(n.split(".")[0]) else None] if s]' 2>/dev/null)
  CCCL_ROOTS := $(CUDA_HOME) $(CCCL_WHEELS)
  CCCL_SEARCHED := the CUDA toolkit and the pip packages cuda-cccl and flashinfer-python; set CCCL_HOME
endif
CCCL_CANDIDATES := $(foreach r,$(CCCL_ROOTS),$(foreach l,$(call cccl_layouts,$(r)),$(if $(wildcard $(word 2,$(subst :, ,$(l)))/cuda/std/__cccl/version.h),$(l))))
CCCL_FOUND := $(firstword $(foreach l,$(CCCL_CANDIDATES),$(if $(shell test '$(call cccl_version_of,$(l))' -ge 3006000 2>/dev/null && echo y),$(l))))
CCCL_SEEN := $(call cccl_version_of,$(firstword $(CCCL_CANDIDATES)))
cccl_dotted = $(shell echo $$(($(1) / 1000000)).$$(($(1) / 1000 % 1000)).$$(($(1) % 1000)))
LIBRARY_OBJ := $(BUILD)/06_fused_topk/library/library_topk.o
ifneq ($(CCCL_FOUND),)
  CCCL_INCLUDES := $(addprefix -I,$(sort $(subst :, ,$(CCCL_FOUND))))
  CCCL_STATUS := CCCL $(call cccl_dotted,$(call cccl_version_of,$(CCCL_FOUND))) in $(firstword $(subst :, ,$(CCCL_FOUND)))
  $(LIBRARY_OBJ): FIRST_INCLUDES := $(CCCL_INCLUDES)
  $(LIBRARY_OBJ): NVCCFLAGS += -DHAVE_BATCHED_TOPK
  LIBRARY_STATUS += with $(CCCL_STATUS)
else
  CCCL_STATUS := $(if $(CCCL_SEEN),found CCCL $(call cccl_dotted,$(CCCL_SEEN)),found no CCCL) (searched $(CCCL_SEARCHED))
  $(LIBRARY_OBJ): NVCCFLAGS += -DCCCL_STATUS='"$(CCCL_STATUS)"'
  LIBRARY_STATUS += without the library variant (it needs CCCL 3.6; $(CCCL_STATUS))
endif
LIBRARY_STAMP += $(CCCL_STATUS)
