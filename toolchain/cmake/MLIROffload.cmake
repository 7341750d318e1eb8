# MLIROffload.cmake: MLIR GPU programs as offload bundles in a CMake project.
#
#   list(APPEND CMAKE_MODULE_PATH "<output of: mlir-offload config --cmake-dir>")
#   include(MLIROffload)
#   mlir_offload_add_bundle(kernels SOURCES a.mlir b.mlir ARCHS sm_80 FLAGS -O3)
#   add_executable(app main.cpp)
#   target_link_libraries(app PRIVATE kernels)     # the bundles and the link flags they need
#
# The executable must be linked by clang (CMAKE_CXX_COMPILER=clang++ of the bundle's profile).
# mlir_offload_add_bundle(<name> SOURCES <.mlir>... [ARCHS <arch>...] [FLAGS <flag>...]
#                         [TARGET_CLANG <major>] [PORTABLE])
# adds one compile step per source (output <binary dir>/<source name>.offload.bc, or .offload.o with
# PORTABLE), with the dependency file mlir-offload writes (input, bitcode libraries, mlir-offload.toml),
# and an INTERFACE library <name> carrying the bundles as link inputs plus `mlir-offload config --ldflags`.

# DEPFILE with the Makefile generators needs CMake 3.20 (a module must not set the includer's policies).
if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "MLIROffload.cmake needs CMake 3.20 or newer (DEPFILE of add_custom_command)")
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
              -MD -MF "${depfile}"
      MAIN_DEPENDENCY "${source_path}"
      DEPFILE "${depfile}"
      COMMENT "mlir-offload compile ${source}"
      VERBATIM)
    set_source_files_properties("${output}" PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    list(APPEND outputs "${output}")
  endforeach()

  add_custom_target(${name}_bundles DEPENDS ${outputs})
  execute_process(COMMAND "${MLIR_OFFLOAD_EXECUTABLE}" config --ldflags
                  WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
                  OUTPUT_VARIABLE ldflags OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE status ERROR_VARIABLE error)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "mlir_offload_add_bundle(${name}): mlir-offload config --ldflags failed: ${error}")
  endif()
  separate_arguments(ldflags UNIX_COMMAND "${ldflags}")
  # Options go before the objects on the link line, libraries (-lcudart) after them.
  set(link_options)
  set(link_libraries)
  foreach(flag IN LISTS ldflags)
    if(flag MATCHES "^-l")
      list(APPEND link_libraries "${flag}")
    else()
      list(APPEND link_options "${flag}")
    endif()
  endforeach()

  add_library(${name} INTERFACE)
  add_dependencies(${name} ${name}_bundles)
  target_sources(${name} INTERFACE ${outputs})
  target_link_options(${name} INTERFACE ${link_options})
  target_link_libraries(${name} INTERFACE ${link_libraries})
  set_target_properties(${name} PROPERTIES MLIR_OFFLOAD_BUNDLES "${outputs}")
endfunction()
