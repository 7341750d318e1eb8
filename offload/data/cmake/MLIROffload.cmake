# MLIROffload.cmake: MLIR GPU programs as offload bundles in a CMake project.
#
#   list(APPEND CMAKE_MODULE_PATH "<output of: mlir-offload config --cmake-dir>")
#   include(MLIROffload)
#   mlir_offload_add_bundle(kernels SOURCES a.mlir b.mlir ARCHS sm_80 FLAGS -O3)
#   add_executable(app main.cpp)
#   target_link_libraries(app PRIVATE kernels)     # the bundles, and `mlir-offload link` as the linker
#
# The executable must be linked by clang (CMAKE_CXX_COMPILER=clang++ of the bundle's profile).
# mlir_offload_add_bundle(<name> SOURCES <.mlir>... [ARCHS <arch>...] [FLAGS <flag>...]
#                         [TARGET_CLANG <major>] [PORTABLE])
# adds one compile step per source (output <binary dir>/<source name>.offload.bc, or .offload.o with
# PORTABLE or for a clang that cannot read mlir-offload's bitcode), with the dependency file mlir-offload
# writes (input, bitcode libraries, mlir-offload.toml), and an INTERFACE library <name> carrying the
# bundles as link inputs. ARCHS takes sm_80, gfx90a and CMAKE_CUDA_ARCHITECTURES values (80, 90a,
# 80-real, 80-virtual); without ARCHS, CMAKE_CUDA_ARCHITECTURES is used. TARGET_CLANG defaults to the
# major version of the project's clang (CMAKE_CXX_COMPILER, else CMAKE_C_COMPILER), checked at configure
# time: a compiler that is not clang, or a clang mlir-offload has no profile for, fails the configure step.
#
# Every executable or shared library that links <name> directly gets `mlir-offload link --clang --ptx-beside`
# as its C/CXX_LINKER_LAUNCHER (set at the end of the configure step), so CMake's link line
# `<compiler> <flags> <objects> -o <target> <libraries>` runs through it: it checks each bundle against
# that compiler (entry layout, readable bitcode), runs clang 19/21's linker wrapper with CUDA 13, adds the
# PTX files of PORTABLE bundles and the runtime library. A target linking the bundles only through another
# library needs mlir_offload_link(<target>) itself.
#
# -DMLIR_OFFLOAD_EMULATE=ON: executables that run their kernels on this CPU, without GPU, driver or toolkit
# (docs/emulator.md): every compile gets --emulate and the launcher runs `mlir-offload link --emulate`.
# CUDA sources linked beside the bundles need -fgpu-rdc --offload-new-driver -foffload-lto (device code as
# LLVM bitcode); link names an object that lacks them.
#
# A target's own linker launcher (its C/CXX_LINKER_LAUNCHER, or CMAKE_<LANG>_LINKER_LAUNCHER) is never
# replaced: mlir-offload link runs behind it (`<yours> mlir-offload link ... <compiler> ...`); one that is an
# `mlir-offload link` already is kept, and configure stops where it lacks the --emulate asked for.

# DEPFILE with the Makefile generators needs CMake 3.20, <LANG>_LINKER_LAUNCHER 3.21 (a module must not
# set the includer's policies).
if(CMAKE_VERSION VERSION_LESS 3.21)
  message(FATAL_ERROR "MLIROffload.cmake needs CMake 3.21 or newer (<LANG>_LINKER_LAUNCHER, DEPFILE)")
endif()

find_program(MLIR_OFFLOAD_EXECUTABLE NAMES mlir-offload DOC "the mlir-offload command")
option(MLIR_OFFLOAD_EMULATE "link executables that run their kernels on this CPU (mlir-offload link --emulate)" OFF)
get_filename_component(_MLIR_OFFLOAD_DATA_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)  # profiles/ beside cmake/

function(mlir_offload_add_bundle name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "PORTABLE" "TARGET_CLANG" "SOURCES;ARCHS;FLAGS")
  if(NOT MLIR_OFFLOAD_EXECUTABLE)
    message(FATAL_ERROR "mlir_offload_add_bundle(${name}): mlir-offload not found (set MLIR_OFFLOAD_EXECUTABLE)")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "mlir_offload_add_bundle(${name}): no SOURCES given")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mlir_offload_add_bundle(${name}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()

  set(flags ${ARG_FLAGS})
  if(MLIR_OFFLOAD_EMULATE)
    list(APPEND flags --emulate)
  endif()
  if(NOT ARG_ARCHS AND CMAKE_CUDA_ARCHITECTURES)
    set(ARG_ARCHS ${CMAKE_CUDA_ARCHITECTURES})
  endif()
  if(ARG_ARCHS)
    _mlir_offload_archs(archs "${name}" ${ARG_ARCHS})
    list(APPEND flags "--offload-arch=${archs}")
  endif()
  _mlir_offload_target_clang(compiler_clang "${name}" "${ARG_TARGET_CLANG}")  # fails unless clang links
  if(NOT ARG_TARGET_CLANG)
    set(ARG_TARGET_CLANG "${compiler_clang}")
  endif()
  list(APPEND flags "--target-clang=${ARG_TARGET_CLANG}")
  _mlir_offload_reads_bitcode(reads_bitcode "${name}" "${ARG_TARGET_CLANG}")
  set(suffix ".offload.bc")
  if(ARG_PORTABLE)
    list(APPEND flags "--portable")
    set(suffix ".offload.o")
  elseif(NOT reads_bitcode)
    set(suffix ".offload.o")  # that clang cannot read our LLVM's bitcode: the bundle is an ELF object
  endif()

  set(outputs)
  foreach(source IN LISTS ARG_SOURCES)
    get_filename_component(source_path "${source}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(stem "${source}" NAME_WE)
    set(output "${CMAKE_CURRENT_BINARY_DIR}/${stem}${suffix}")
    set(depfile "${CMAKE_CURRENT_BINARY_DIR}/${stem}.offload.d")
    add_custom_command(
      OUTPUT "${output}"
      COMMAND "${MLIR_OFFLOAD_EXECUTABLE}" compile "${source_path}" -o "${output}" ${flags}
              -MD -MP -MF "${depfile}"
      MAIN_DEPENDENCY "${source_path}"
      DEPFILE "${depfile}"
      COMMENT "mlir-offload compile ${source}"
      VERBATIM)
    set_source_files_properties("${output}" PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    list(APPEND outputs "${output}")
  endforeach()

  add_custom_target(${name}_bundles DEPENDS ${outputs})
  add_library(${name} INTERFACE)
  add_dependencies(${name} ${name}_bundles)
  target_sources(${name} INTERFACE ${outputs})
  set_target_properties(${name} PROPERTIES MLIR_OFFLOAD_BUNDLES "${outputs}")
  set_property(GLOBAL APPEND PROPERTY MLIR_OFFLOAD_BUNDLE_LIBRARIES ${name})
  get_property(deferred GLOBAL PROPERTY MLIR_OFFLOAD_LAUNCHERS_DEFERRED)
  if(NOT deferred)
    set_property(GLOBAL PROPERTY MLIR_OFFLOAD_LAUNCHERS_DEFERRED TRUE)
    cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _mlir_offload_link_users "${CMAKE_SOURCE_DIR}")
  endif()
endfunction()

# The link of <target> runs `mlir-offload link --clang <compiler> --ptx-beside <compiler's link line>`
# (--emulate instead of --ptx-beside with MLIR_OFFLOAD_EMULATE), behind the target's own launcher if it has one.
function(mlir_offload_link target)
  if(MLIR_OFFLOAD_EMULATE)
    set(ours "${MLIR_OFFLOAD_EXECUTABLE}" link --emulate --clang)
  else()
    set(ours "${MLIR_OFFLOAD_EXECUTABLE}" link --ptx-beside --clang)
  endif()
  foreach(lang IN ITEMS C CXX)
    get_target_property(theirs ${target} ${lang}_LINKER_LAUNCHER)
    if(NOT theirs)
      set(theirs)
    endif()
    _mlir_offload_runs_link(runs_link "${theirs}")
    if(runs_link)  # an mlir-offload link already (the user's own, or an earlier call): kept as it is
      if(MLIR_OFFLOAD_EMULATE AND NOT "--emulate" IN_LIST theirs)
        list(JOIN theirs " " shown)
        message(FATAL_ERROR "mlir_offload_link(${target}): MLIR_OFFLOAD_EMULATE is ON but its ${lang}_LINKER_LAUNCHER "
                            "'${shown}' links for the GPU: add --emulate to it, or remove it")
      endif()
      continue()
    endif()
    if(theirs)
      string(APPEND theirs ";")  # ours runs behind it
    endif()
    set_target_properties(${target} PROPERTIES ${lang}_LINKER_LAUNCHER "${theirs}${ours}")
  endforeach()
  _mlir_offload_link_language(${target})
endfunction()

# A target with CUDA or HIP sources would be linked by that language's compiler (nvcc cannot read a bundle:
# `file not recognized`): its link is clang's, the language mlir_offload_add_bundle checked (CXX, else C).
# A LINKER_LANGUAGE of the user's own that is not C or CXX stops the configure step naming the fix.
function(_mlir_offload_link_language target)
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  get_property(link_language GLOBAL PROPERTY MLIR_OFFLOAD_LINK_LANGUAGE)
  get_target_property(own ${target} LINKER_LANGUAGE)
  if(own AND NOT own MATCHES "^(C|CXX)$")
    message(FATAL_ERROR "${target} links MLIR offload bundles, which clang links (CMAKE_${link_language}_COMPILER), "
                        "but its LINKER_LANGUAGE is ${own}: set_target_properties(${target} PROPERTIES "
                        "LINKER_LANGUAGE ${link_language})")
  endif()
  if(NOT own AND link_language AND ("CUDA" IN_LIST languages OR "HIP" IN_LIST languages))
    set_target_properties(${target} PROPERTIES LINKER_LANGUAGE ${link_language})
  endif()
endfunction()

# Whether a launcher (a list) runs `mlir-offload link` (also spelled `python3 -m offload link`).
function(_mlir_offload_runs_link out launcher)
  set(previous)
  set(found FALSE)
  foreach(word IN LISTS launcher)
    get_filename_component(previous_name "${previous}" NAME)
    if(word STREQUAL "link" AND (previous STREQUAL MLIR_OFFLOAD_EXECUTABLE
                                 OR previous_name MATCHES "^(mlir-offload|offload)$"))
      set(found TRUE)
    endif()
    set(previous "${word}")
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# At the end of the configure step: mlir_offload_link() every executable and shared library of `dir` and
# its subdirectories that links a bundle library directly.
function(_mlir_offload_link_users dir)
  get_property(bundle_libraries GLOBAL PROPERTY MLIR_OFFLOAD_BUNDLE_LIBRARIES)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)$")
      continue()
    endif()
    get_target_property(libraries ${target} LINK_LIBRARIES)
    foreach(library IN LISTS libraries)
      if(library IN_LIST bundle_libraries)
        mlir_offload_link(${target})
        break()
      endif()
    endforeach()
  endforeach()
  get_property(subdirectories DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    _mlir_offload_link_users("${subdirectory}")
  endforeach()
endfunction()

# CMAKE_CUDA_ARCHITECTURES spellings -> mlir-offload's --offload-arch list: 80 and 90a as they are (compile
# takes them), 80-real -> 80, 80-virtual -> compute_80 (PTX); all/native/all-major name no architecture.
function(_mlir_offload_archs out name)
  set(archs)
  foreach(arch IN LISTS ARGN)
    if(arch MATCHES "^(all|all-major|native)$")
      message(FATAL_ERROR "mlir_offload_add_bundle(${name}): ARCHS/CMAKE_CUDA_ARCHITECTURES '${arch}' names "
                          "no architecture: list them, e.g. 80;90a")
    elseif(arch MATCHES "^([0-9]+[a-z]?)-real$")
      set(arch "${CMAKE_MATCH_1}")
    elseif(arch MATCHES "^([0-9]+[a-z]?)-virtual$")
      set(arch "compute_${CMAKE_MATCH_1}")
    endif()
    list(APPEND archs "${arch}")
  endforeach()
  list(JOIN archs "," joined)
  set(${out} "${joined}" PARENT_SCOPE)
endfunction()

# The major version of the project's clang, which links the bundles (a profile for it is needed unless
# `given`, the user's TARGET_CLANG, names another).
function(_mlir_offload_target_clang out name given)
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if("CXX" IN_LIST languages)
    set(lang CXX)
  elseif("C" IN_LIST languages)
    set(lang C)
  else()
    message(FATAL_ERROR "mlir_offload_add_bundle(${name}): enable C or CXX (project(... LANGUAGES CXX)): "
                        "the bundles are linked by that language's compiler, which must be clang")
  endif()
  set(compiler "${CMAKE_${lang}_COMPILER}")
  _mlir_offload_profiles(known)
  list(JOIN known ", " known_shown)
  if(NOT CMAKE_${lang}_COMPILER_ID STREQUAL "Clang")
    list(GET known -1 newest)
    set(driver clang)
    if(lang STREQUAL "CXX")
      set(driver clang++)
    endif()
    message(FATAL_ERROR "mlir_offload_add_bundle(${name}): the bundles are linked by clang "
                        "(--offload-new-driver), but CMAKE_${lang}_COMPILER is ${CMAKE_${lang}_COMPILER_ID} "
                        "${CMAKE_${lang}_COMPILER_VERSION} (${compiler}): configure a new build folder with "
                        "-DCMAKE_${lang}_COMPILER=${driver}-${newest} (mlir-offload's clang profiles: ${known_shown})")
  endif()
  string(REGEX MATCH "^[0-9]+" major "${CMAKE_${lang}_COMPILER_VERSION}")
  if(NOT given AND NOT EXISTS "${_MLIR_OFFLOAD_DATA_DIR}/profiles/clang${major}.toml")
    message(FATAL_ERROR "mlir_offload_add_bundle(${name}): ${compiler} is clang ${CMAKE_${lang}_COMPILER_VERSION}, "
                        "for which mlir-offload has no profile (profiles: ${known_shown}): use one of those clangs, or "
                        "pass TARGET_CLANG <major> for a clang that links this one's bundles")
  endif()
  message(STATUS "mlir-offload: bundles for clang ${major} (${compiler})")
  set_property(GLOBAL PROPERTY MLIR_OFFLOAD_LINK_LANGUAGE ${lang})
  set(${out} "${major}" PARENT_SCOPE)
endfunction()

function(_mlir_offload_profiles out)
  file(GLOB known RELATIVE "${_MLIR_OFFLOAD_DATA_DIR}/profiles" "${_MLIR_OFFLOAD_DATA_DIR}/profiles/clang*.toml")
  string(REGEX REPLACE "clang([0-9]+)\\.toml" "\\1" known "${known}")
  list(SORT known COMPARE NATURAL)
  set(${out} "${known}" PARENT_SCOPE)
endfunction()

# Whether clang <major> reads mlir-offload's bitcode: its profile's [bitcode] reads_llvm_up_to against
# the LLVM of `mlir-offload --version` (else the bundle is an ELF object, named .offload.o).
function(_mlir_offload_reads_bitcode out name major)
  set(profile "${_MLIR_OFFLOAD_DATA_DIR}/profiles/clang${major}.toml")
  if(NOT EXISTS "${profile}")
    _mlir_offload_profiles(known)
    list(JOIN known ", " known_shown)
    message(FATAL_ERROR "mlir_offload_add_bundle(${name}): TARGET_CLANG ${major} has no mlir-offload profile "
                        "(profiles: ${known_shown})")
  endif()
  file(STRINGS "${profile}" reads REGEX "^reads_llvm_up_to *=")
  string(REGEX MATCH "[0-9]+" reads "${reads}")
  execute_process(COMMAND "${MLIR_OFFLOAD_EXECUTABLE}" --version OUTPUT_VARIABLE version RESULT_VARIABLE failed)
  if(failed OR NOT version MATCHES "\nLLVM ([0-9]+)")
    message(FATAL_ERROR "mlir_offload_add_bundle(${name}): `${MLIR_OFFLOAD_EXECUTABLE} --version` failed")
  endif()
  if(CMAKE_MATCH_1 GREATER reads)
    set(${out} FALSE PARENT_SCOPE)
  else()
    set(${out} TRUE PARENT_SCOPE)
  endif()
endfunction()
