# Builds one stage's program, ./run, from its STAGE_SRCS and common/. A stage's Makefile is:
#     STAGE_SRCS := kernels.cu main.c
#     LINKED_SRCS := 01_naive/naive.cu     (optional: earlier stages' kernels, from the repo root)
#     USES_CUDNN := 1                      (optional: link cuDNN when the build finds it)
#     include ../common/stage.mk
# Every stage has an exercise: STAGE_SRCS names exercise.cu, the scaffold the student completes,
# linked into ./run; ./run_solution is the same program with solution/exercise.cu in its place.

BUILD := build
include $(dir $(lastword $(MAKEFILE_LIST)))build.mk

# The stage's folder: the last part of the path, even where a folder above has a space in its name.
STAGE_DIR := $(lastword $(subst /, ,$(CURDIR)))
OBJS := $(patsubst %,$(BUILD)/$(STAGE_DIR)/%.o,$(basename $(STAGE_SRCS))) \
        $(patsubst %,$(BUILD)/%.o,$(basename $(LINKED_SRCS))) $(COMMON_OBJS)

SOLUTION_OBJS := $(patsubst $(BUILD)/$(STAGE_DIR)/exercise.o,$(BUILD)/$(STAGE_DIR)/solution/exercise.o,$(OBJS))

.PHONY: all clean
all: run run_solution

run: $(OBJS)
	@echo "linking $(STAGE_DIR)/run for $(ARCH) ($(ARCH_SOURCE)) $(CUDNN_STATUS)"
	$(NVCC) $(GENCODE) -o $@ $^ $(LDLIBS)

run_solution: $(SOLUTION_OBJS)
	$(NVCC) $(GENCODE) -o $@ $^ $(LDLIBS)

clean:
	rm -rf $(BUILD) run run_solution

-include $(sort $(OBJS:.o=.d) $(SOLUTION_OBJS:.o=.d))
