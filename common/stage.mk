# Builds one stage's program, ./run, from its STAGE_SRCS and common/. A stage's Makefile is:
#     STAGE_SRCS := kernels.cu main.c
#     LINKED_SRCS := 01_naive/naive.cu     (optional: earlier stages' kernels, from the repo root)
#     USES_CUDNN := 1                      (optional: link cuDNN when the build finds it)
#     include ../common/stage.mk

BUILD := build
include $(dir $(lastword $(MAKEFILE_LIST)))build.mk

STAGE_DIR := $(notdir $(CURDIR))
OBJS := $(patsubst %,$(BUILD)/$(STAGE_DIR)/%.o,$(basename $(STAGE_SRCS))) \
        $(patsubst %,$(BUILD)/%.o,$(basename $(LINKED_SRCS))) $(COMMON_OBJS)

.PHONY: all clean
all: run

run: $(OBJS)
	@echo "linking $(STAGE_DIR)/run for $(ARCH) ($(ARCH_SOURCE)) $(CUDNN_STATUS)"
	$(NVCC) $(GENCODE) -o $@ $^ $(LDLIBS)

clean:
	rm -rf $(BUILD) run

-include $(OBJS:.o=.d)
