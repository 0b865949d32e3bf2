# ARCH checked by make itself, as it was written ($(value): unexpanded), before any shell sees it:
# one or more architectures, sm_ and a number, by spaces or commas. Included by common/build.mk and,
# where ARCH is given, by the top-level Makefile, so that a bad one is refused in one line.
comma := ,
no_digits = $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(1)))))))))))
is_arch = $(and $(filter sm_%,$(1)),$(1:sm_%=%),$(if $(call no_digits,$(1:sm_%=%)),,$(1)))
ARCH_LIST := $(strip $(subst $(comma), ,$(value ARCH)))
ifneq ($(or $(if $(ARCH_LIST),,empty),$(strip $(foreach a,$(ARCH_LIST),$(if $(call is_arch,$(a)),,$(a))))),)
  $(error ARCH must name architectures like sm_90 or "sm_80 sm_90", got '$(value ARCH)')
endif
