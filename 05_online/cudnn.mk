# cuDNN, measured beside stage 05's kernels when the build finds it (LIBRARY_MK in build.mk): read by
# 05_online/Makefile and tests/Makefile. Found in the first of these places
# (a header folder with cudnn.h, then a library folder with libcudnn.so) that has both: CUDNN_HOME's
# include/ and lib64/ or lib/ when it is set, and only there; otherwise the CUDA toolkit, the
# system's packages (Debian's and Ubuntu's libcudnn*-dev), and PyTorch's pip wheel (nvidia/cudnn).
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
ifneq ($(CUDNN_FOUND),)
  CUDNN_LIB := $(call cudnn_lib_in,$(lastword $(subst :, ,$(CUDNN_FOUND))))
  LIBRARY_FLAGS += -DHAVE_CUDNN -I$(firstword $(subst :, ,$(CUDNN_FOUND)))
  LIBRARY_LDLIBS += -Xlinker $(CUDNN_LIB) -Xlinker -rpath -Xlinker $(dir $(CUDNN_LIB))
  LIBRARY_STATUS += with cuDNN ($(CUDNN_LIB))
else
  LIBRARY_STATUS += without cuDNN (no cudnn.h with a libcudnn.so in: $(CUDNN_SEARCHED))
endif

