# Builds one stage's program, ./run, from its main.c, its exercise.cu, its sources.mk and common/.
# A stage's Makefile is:
#     include sources.mk                   (STAGE_SOURCES += the stage's files, from the repo root)
#     LINKED_SRCS := 01_naive/naive.cu     (optional: earlier stages' kernels, from the repo root)
#     LIBRARY_MK := library.mk             (optional: a library measured beside, build.mk)
#     include ../common/stage.mk
# Every stage has an exercise: exercise.cu, the scaffold the student completes, is linked into ./run;
# ./run_solution is the same program with solution/exercise.cu in its place.

BUILD := build
include $(dir $(lastword $(MAKEFILE_LIST)))build.mk

# The stage's folder: the last part of the path, even where a folder above has a space in its name.
STAGE_DIR := $(lastword $(subst /, ,$(CURDIR)))
OBJS := $(patsubst %,$(BUILD)/%.o,$(basename $(STAGE_SOURCES) $(STAGE_DIR)/exercise.cu $(STAGE_DIR)/main.c \
                                              $(LINKED_SRCS))) $(COMMON_OBJS)

SOLUTION_OBJS := $(patsubst $(BUILD)/$(STAGE_DIR)/exercise.o,$(BUILD)/$(STAGE_DIR)/solution/exercise.o,$(OBJS))

.PHONY: all clean
all: run run_solution

run: $(OBJS)
	@echo "linking $(STAGE_DIR)/run for $(ARCH) ($(ARCH_SOURCE)) $(LIBRARY_STATUS)"
	$(NVCC) $(GENCODE) -o $@ $^ $(LDLIBS)

run_solution: $(SOLUTION_OBJS)
	$(NVCC) $(GENCODE) -o $@ $^ $(LDLIBS)

clean:
	rm -rf $(BUILD) run run_solution

-include $(sort $(OBJS:.o=.d) $(SOLUTION_OBJS:.o=.d))
