# ARCH checked by make itself, as it was written ($(value): unexpanded), before any shell sees it:
# one or more architectures, sm_ and a number, by spaces or commas. Included by common/build.mk and,
# where ARCH or CODE is given, by the top-level Makefile, so that a bad one is refused in one line.
comma := ,
no_digits = $(subst 0,,$(subst 1,,$(subst 2,,$(subst 3,,$(subst 4,,$(subst 5,,$(subst 6,,$(subst 7,,$(subst 8,,$(subst 9,,$(1)))))))))))
is_arch = $(and $(filter sm_%,$(1)),$(1:sm_%=%),$(if $(call no_digits,$(1:sm_%=%)),,$(1)))
ARCH_LIST := $(strip $(subst $(comma), ,$(value ARCH)))
ifneq ($(origin ARCH),undefined)
  ifneq ($(or $(if $(ARCH_LIST),,empty),$(strip $(foreach a,$(ARCH_LIST),$(if $(call is_arch,$(a)),,$(a))))),)
    $(error ARCH must name architectures like sm_90 or "sm_80 sm_90", got '$(value ARCH)')
  endif
endif

# CODE, the commit a CSV header names (common/build.mk), checked the same way where it is given: one
# word with no quote and nothing that a shell or make would run.
ifneq ($(origin CODE),undefined)
  ifneq ($(or $(filter-out 1,$(words $(value CODE))),$(strip $(foreach c,$$ ' " ` \ ; & | < > ( ) { } * ? [ ] ~ !,$(findstring $(c),$(value CODE))))),)
    $(error CODE must name a commit, like CODE=a67d67c or CODE=v1.2-3-gabcdef0-dirty, got '$(value CODE)')
  endif
endif
