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
# PORTABLE), with the dependency file mlir-offload writes (input, bitcode libraries, mlir-offload.toml),
# and an INTERFACE library <name> carrying the bundles as link inputs.
#
# Every executable or shared library that links <name> directly gets `mlir-offload link --clang --ptx-beside`
# as its C/CXX_LINKER_LAUNCHER (set at the end of the configure step), so CMake's link line
# `<compiler> <flags> <objects> -o <target> <libraries>` runs through it: it checks each bundle against
# that compiler (entry layout, readable bitcode), runs clang 19/21's linker wrapper with CUDA 13, adds the
# PTX files of PORTABLE bundles and the runtime library. A target linking the bundles only through another
# library needs mlir_offload_link(<target>) itself.

# DEPFILE with the Makefile generators needs CMake 3.20, <LANG>_LINKER_LAUNCHER 3.21 (a module must not
# set the includer's policies).
if(CMAKE_VERSION VERSION_LESS 3.21)
  message(FATAL_ERROR "MLIROffload.cmake needs CMake 3.21 or newer (<LANG>_LINKER_LAUNCHER, DEPFILE)")
endif()

find_program(MLIR_OFFLOAD_EXECUTABLE NAMES mlir-offload DOC "the mlir-offload command")

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
  if(ARG_ARCHS)
    list(JOIN ARG_ARCHS "," archs)
    list(APPEND flags "--offload-arch=${archs}")
  endif()
  if(ARG_TARGET_CLANG)
    list(APPEND flags "--target-clang=${ARG_TARGET_CLANG}")
  endif()
  set(suffix ".offload.bc")
  if(ARG_PORTABLE)
    list(APPEND flags "--portable")
    set(suffix ".offload.o")
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

# The link of <target> runs `mlir-offload link --clang <compiler> --ptx-beside <compiler's link line>`.
function(mlir_offload_link target)
  set(launcher "${MLIR_OFFLOAD_EXECUTABLE}" link --ptx-beside --clang)
  set_target_properties(${target} PROPERTIES C_LINKER_LAUNCHER "${launcher}" CXX_LINKER_LAUNCHER "${launcher}")
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
