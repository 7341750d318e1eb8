# mlir-offload.mk: build offload bundles from MLIR in a (GNU) Makefile, and link them with clang.
#
#   OFFLOAD_ARCH = sm_80,sm_90             # empty: mlir-offload.toml beside the sources, else the default
#   OFFLOAD_BUNDLES = a$(OFFLOAD_BUNDLE_SUFFIX) b$(OFFLOAD_BUNDLE_SUFFIX)
#   include $(shell mlir-offload config --mk)
#   app: main.o $(OFFLOAD_BUNDLES)
#   	$(OFFLOAD_LINK) -o $@ $^ $(LDLIBS)
#
# Variables (set them before or after the include, or on the make command line):
#   MLIR_OFFLOAD        the mlir-offload command                   (default: mlir-offload)
#   OFFLOAD_ARCH        --offload-arch of every compile            (default: empty, see above)
#   MLIR_OFFLOAD_FLAGS  more compile flags: -O2, --portable, --link-bitcode=lib.bc, --target-clang=19
#   OFFLOAD_CLANG       the clang that links (and compiles .cu)    (default: link's rule, `mlir-offload
#                       config --clang`: clang-N of the target clang N, else /usr/lib/llvm-N/bin/clang, else clang)
#   OFFLOAD_CUDA_PATH   CUDA toolkit of the link                   (default: empty, mlir-offload finds it)
#   OFFLOAD_CUFLAGS     what clang needs to compile .cu for it     (default: mlir-offload config --cflags)
#   OFFLOAD_EMULATE     1: an executable that runs its kernels on this CPU, without GPU, driver or toolkit
#                       (docs/emulator.md): compile --emulate, link --emulate, and .cu files compiled with
#                       -foffload-lto (device code as LLVM bitcode, which the emulator retargets); `make
#                       clean` when switching, since the objects differ              (default: empty, 0: off)
#   OFFLOAD_BUNDLE_SUFFIX  .offload.o where MLIR_OFFLOAD_FLAGS has --portable or --host-format=obj (an ELF
#                       host object, which clang must not read as bitcode), else .offload.bc; a bundle for
#                       a clang that cannot read our bitcode (e.g. --target-clang=19) is an object too:
#                       add --portable, or compile names the fix
#
# The link step is `mlir-offload link` with OFFLOAD_CLANG, not plain clang: it checks every bundle against
# that clang (entry layout, bitcode it can read: a bundle for another clang would link into an executable
# that registers no kernel), runs clang 19/21's linker wrapper with CUDA 13 through the fatbinary wrapper,
# and adds the PTX files of --portable bundles (<bundle>.<arch>.ptx) to the executable's fatbin.
#
# Each compile also writes %.offload.d (-MD -MF): the bundle depends on its .mlir input, the bitcode
# libraries it links and the mlir-offload.toml it used, so editing any of them rebuilds it. Every
# output is written whole or not at all (temporary file + rename), so `make -j` is safe.

MLIR_OFFLOAD ?= mlir-offload
OFFLOAD_ARCH ?=
MLIR_OFFLOAD_FLAGS ?=
# Asked once per make run, and only when used; --target-clang of MLIR_OFFLOAD_FLAGS wins over mlir-offload.toml.
OFFLOAD_CLANG ?= $(eval OFFLOAD_CLANG := $(or $(shell $(MLIR_OFFLOAD) config --clang \
                   $(patsubst --target-clang=%,--target-clang %,$(filter --target-clang=%,$(MLIR_OFFLOAD_FLAGS)))),clang))$(OFFLOAD_CLANG)

OFFLOAD_CUDA_PATH ?=
OFFLOAD_BUNDLE_SUFFIX ?= $(if $(filter --portable --host-format=obj,$(MLIR_OFFLOAD_FLAGS)),.offload.o,.offload.bc)

# Asked once per make run, and only when used.
OFFLOAD_CUFLAGS ?= $(eval OFFLOAD_CUFLAGS := $(shell $(MLIR_OFFLOAD) config --cflags))$(OFFLOAD_CUFLAGS)

OFFLOAD_EMULATE ?=
# Emulating: OFFLOAD_EMULATE set (not 0), or --emulate among LDFLAGS (then link gets it from there).
mlir_offload_emulating = $(strip $(filter-out 0,$(OFFLOAD_EMULATE)) $(filter --emulate,$(LDFLAGS)))

OFFLOAD_COMPILE = $(MLIR_OFFLOAD) compile $(if $(strip $(OFFLOAD_ARCH)),--offload-arch=$(strip $(OFFLOAD_ARCH))) \
                  $(if $(mlir_offload_emulating),--emulate) $(MLIR_OFFLOAD_FLAGS)
OFFLOAD_LINK = $(MLIR_OFFLOAD) link --clang=$(OFFLOAD_CLANG) \
               $(if $(mlir_offload_emulating),$(if $(filter --emulate,$(LDFLAGS)),,--emulate),--ptx-beside \
               $(if $(strip $(OFFLOAD_CUDA_PATH)),--cuda-path=$(strip $(OFFLOAD_CUDA_PATH)))) $(LDFLAGS)

%.offload.bc: %.mlir
	$(OFFLOAD_COMPILE) $< -o $@ -MD -MP -MF $(@:.bc=.d)

# Portable bundles (--portable / --host-format=obj) are ELF objects.
%.offload.o: %.mlir
	$(OFFLOAD_COMPILE) --host-format=obj $< -o $@ -MD -MP -MF $(@:.o=.d)

# CUDA sources that join the same device link (-fgpu-rdc: device LTO with the bundles). Named %.o (not
# %.cu.o, which make's built-in `%: %.o` would turn into a circular way of remaking the .cu). Emulating,
# -foffload-lto keeps their device code LLVM bitcode (else a cubin, which the emulator cannot run).
%.o: %.cu
	$(OFFLOAD_CLANG) -x cuda -fgpu-rdc --offload-new-driver $(if $(mlir_offload_emulating),-foffload-lto) $(OFFLOAD_CUFLAGS) \
	  $(foreach a,$(subst $(,), ,$(OFFLOAD_ARCH)),--offload-arch=$(a)) $(CUFLAGS) -c $< -o $@

, := ,
# The dependency files hold rules: keep the including Makefile's default goal (its first target).
mlir_offload_default_goal := $(.DEFAULT_GOAL)
-include $(sort $(wildcard *.offload.d) $(addsuffix .offload.d,$(basename $(basename $(OFFLOAD_BUNDLES)))))
.DEFAULT_GOAL := $(mlir_offload_default_goal)
