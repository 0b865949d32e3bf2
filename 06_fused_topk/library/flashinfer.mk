# FlashInfer's headers, for stage 06's `flashinfer` variant and sampler (LIBRARY_MK in build.mk),
# read by 06_fused_topk/Makefile and tests/Makefile after cccl.mk, whose CCCL 3.6 they need. Found in the
# first of: FLASHINFER_HOME when it is set, and only there (a FlashInfer checkout, or the `data`
# folder of its pip wheel); otherwise the pip package flashinfer-python. A folder is taken when its
# include/flashinfer/topk.cuh exists.
ifdef FLASHINFER_HOME
  FLASHINFER_ROOTS := $(FLASHINFER_HOME)
  FLASHINFER_SEARCHED := FLASHINFER_HOME=$(FLASHINFER_HOME)
else
  FLASHINFER_ROOTS := $(shell python3 -c 'import importlib.util as u; s = u.find_spec("flashinfer"); s and print(list(s.submodule_search_locations)[0] + "/data")' 2>/dev/null)
  FLASHINFER_SEARCHED := the pip package flashinfer-python; set FLASHINFER_HOME
endif
FLASHINFER_FOUND := $(firstword $(foreach r,$(FLASHINFER_ROOTS),$(if $(wildcard $(r)/include/flashinfer/topk.cuh),$(r)/include)))
FLASHINFER_OBJ := $(addprefix $(BUILD)/06_fused_topk/library/,flashinfer_topk.o flashinfer_draw.o)
ifeq ($(FLASHINFER_FOUND),)
  FLASHINFER_STATUS := found none (searched $(FLASHINFER_SEARCHED))
else ifeq ($(CCCL_FOUND),)
  FLASHINFER_STATUS := found them in $(FLASHINFER_FOUND), but not the CCCL 3.6 they need
else
  FLASHINFER_STATUS := in $(FLASHINFER_FOUND)
endif
ifeq ($(FLASHINFER_STATUS),in $(FLASHINFER_FOUND))
  $(FLASHINFER_OBJ): FIRST_INCLUDES := $(CCCL_INCLUDES) -isystem $(FLASHINFER_FOUND)
  $(FLASHINFER_OBJ): NVCCFLAGS += -DHAVE_FLASHINFER
  LIBRARY_STATUS += with the FlashInfer headers $(FLASHINFER_STATUS)
else
  $(FLASHINFER_OBJ): NVCCFLAGS += -DFLASHINFER_STATUS='"$(FLASHINFER_STATUS)"'
  LIBRARY_STATUS += without the flashinfer variant and sampler ($(FLASHINFER_STATUS))
endif
LIBRARY_STAMP += $(FLASHINFER_STATUS)
