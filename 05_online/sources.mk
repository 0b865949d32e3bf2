# What stage 05 is built from besides main.c and exercise.cu, from the repository root: its
# Makefile and tests/Makefile both read this list. cudnn_softmax.c needs cudnn.mk (LIBRARY_MK).
STAGE_SOURCES += 05_online/online.cu 05_online/cudnn_softmax.c
