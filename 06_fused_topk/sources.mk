# What stage 06 is built from besides main.c and exercise.cu, from the repository root: its
# Makefile and tests/Makefile both read this list.
STAGE_SOURCES += $(addprefix 06_fused_topk/,fused_topk.cu fast/fast.cu library/library_topk.cu library/flashinfer_topk.cu \
                   library/flashinfer_draw.cu decode_loop.c \
                   host/draw_run.c host/draw_reference.c host/dtype.c host/npy.c host/row_order.c host/topk_reference.c \
                   host/topk_bench.c host/topk_flags.c host/topk_outputs.c)
