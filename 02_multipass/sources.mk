# What stage 02 is built from besides main.c and exercise.cu, from the repository root: its
# Makefile and tests/Makefile both read this list.
STAGE_SOURCES += 02_multipass/multipass.cu
