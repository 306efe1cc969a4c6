# Tskernel.cmake: kernels written in TypeScript as CUDA sources of a CMake target. It finds the tskernel CLI
# (the cache variable TSKERNEL_EXECUTABLE) and defines tskernel_add_cuda_kernels(), which runs
# `tskernel build --target cuda` at build time, one custom command per kernel file, and adds the generated
# .cu (device code) and .cuh (host launch functions) to a target. It ships in the npm package: a project that
# installed tskernel writes include(node_modules/tskernel/cmake/Tskernel.cmake); it needs only CMake and a
# project with the CUDA language enabled (a copy of this file works the same).
#
# TSKERNEL_EXECUTABLE is a path to the CLI (node_modules/.bin/tskernel, a checkout's bin/tskernel.js) or a
# command line ("npx --no -- tskernel"). Left empty it is searched for, first hit wins, from the current source
# folder upwards: node_modules/.bin/tskernel (tskernel installed with npm), then a tskernel checkout
# (bin/tskernel.js beside a package.json named tskernel); then the package this file came with; then
# `tskernel` on PATH (npm install -g).
# With npx, keep the `--`: without it `npx --no tskernel --version` prints npm's version, not tskernel's.

# Run as a script (cmake -P, by the generation step below) it checks one build's output instead: the .cu a
# kernel file was expected to give. A file whose kernels all leave CUDA out of their `targets` option gets no
# .cu from `tskernel build --target cuda` (the build skips them, by design), so the step stops here with the
# file and the kernels' targets, read from the build's manifest.json, rather than leaving the compiler to fail
# on a missing source.
if(CMAKE_SCRIPT_MODE_FILE AND DEFINED TSKERNEL_CHECK_OUT)
  if(EXISTS "${TSKERNEL_CHECK_OUT}/${TSKERNEL_CHECK_NAME}.cu")
    return()
  endif()
  set(_declared "")
  # Each kernel's targets from the manifest, where this CMake reads JSON (3.19 and later).
  if(NOT CMAKE_VERSION VERSION_LESS 3.19 AND EXISTS "${TSKERNEL_CHECK_OUT}/manifest.json")
    cmake_policy(VERSION 3.19)
    file(READ "${TSKERNEL_CHECK_OUT}/manifest.json" _manifest)
    string(JSON _count LENGTH "${_manifest}" kernels)
    set(_seen "")
    if(_count GREATER 0)
      math(EXPR _last "${_count} - 1")
      foreach(_i RANGE ${_last})
        string(JSON _name GET "${_manifest}" kernels ${_i} name)
        if(_name IN_LIST _seen)
          continue()
        endif()
        list(APPEND _seen "${_name}")
        string(JSON _targets ERROR_VARIABLE _none GET "${_manifest}" kernels ${_i} declaredTargets)
        if(_none)
          set(_targets "none declared")
        else()
          string(REGEX REPLACE "[ \n]+" " " _targets "${_targets}")
        endif()
        string(APPEND _declared "\n  ${_name}: targets ${_targets}")
      endforeach()
    endif()
  endif()
  message(FATAL_ERROR "tskernel_add_cuda_kernels(${TSKERNEL_CHECK_TARGET}): ${TSKERNEL_CHECK_FILE} has no kernel for CUDA, "
    "so `tskernel build --target cuda` wrote no ${TSKERNEL_CHECK_NAME}.cu: each of its kernels declares `targets` "
    "that leave out \"cuda\"${_declared}\n"
    "Add \"cuda\" to a kernel's targets, or leave ${TSKERNEL_CHECK_FILE} out of tskernel_add_cuda_kernels().")
endif()

include_guard(GLOBAL)

# Where this file is: inside a function CMAKE_CURRENT_LIST_DIR names the caller's folder instead.
set(_TSKERNEL_MODULE_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(_TSKERNEL_MODULE_FILE "${CMAKE_CURRENT_LIST_FILE}")

set(TSKERNEL_EXECUTABLE "" CACHE STRING
  "The tskernel CLI: a path (node_modules/.bin/tskernel, bin/tskernel.js) or a command line ('npx --no -- tskernel'); empty: search")

# A folder is a tskernel checkout when its package.json names the package and the CLI script is there.
function(_tskernel_is_checkout dir out_var)
  set(result FALSE)
  if(EXISTS "${dir}/bin/tskernel.js" AND EXISTS "${dir}/package.json")
    file(READ "${dir}/package.json" manifest LIMIT 4096)
    if(manifest MATCHES "\"name\"[ \t\r\n]*:[ \t\r\n]*\"tskernel\"")
      set(result TRUE)
    endif()
  endif()
  set(${out_var} ${result} PARENT_SCOPE)
endfunction()

function(_tskernel_search out_var)
  set(dir "${CMAKE_CURRENT_SOURCE_DIR}")
  while(TRUE)
    if(EXISTS "${dir}/node_modules/.bin/tskernel")
      set(${out_var} "${dir}/node_modules/.bin/tskernel" PARENT_SCOPE)
      return()
    endif()
    _tskernel_is_checkout("${dir}" checkout)
    if(checkout)
      set(${out_var} "${dir}/bin/tskernel.js" PARENT_SCOPE)
      return()
    endif()
    get_filename_component(parent "${dir}" DIRECTORY)
    if(parent STREQUAL dir)
      break()
    endif()
    set(dir "${parent}")
  endwhile()
  # The package (or checkout) this module ships in, when it was included from there.
  get_filename_component(module_package "${_TSKERNEL_MODULE_DIR}" DIRECTORY)
  _tskernel_is_checkout("${module_package}" shipped_with)
  if(shipped_with)
    set(${out_var} "${module_package}/bin/tskernel.js" PARENT_SCOPE)
    return()
  endif()
  find_program(_TSKERNEL_ON_PATH tskernel)
  if(_TSKERNEL_ON_PATH)
    set(${out_var} "${_TSKERNEL_ON_PATH}" PARENT_SCOPE)
  else()
    set(${out_var} "" PARENT_SCOPE)
  endif()
endfunction()

if(TSKERNEL_EXECUTABLE STREQUAL "")
  _tskernel_search(_tskernel_found)
  if(_tskernel_found STREQUAL "")
    message(FATAL_ERROR
      "tskernel: the tskernel CLI was not found (searched node_modules/.bin/tskernel and a tskernel checkout "
      "from ${CMAKE_CURRENT_SOURCE_DIR} upwards, the package beside ${_TSKERNEL_MODULE_DIR}, then PATH).\n"
      "Install it in your project (npm install --save-dev tskernel) or name it: "
      "-DTSKERNEL_EXECUTABLE=/path/to/node_modules/.bin/tskernel (or \"npx --no -- tskernel\").")
  endif()
  set(TSKERNEL_EXECUTABLE "${_tskernel_found}" CACHE STRING "The tskernel CLI" FORCE)
endif()

# The command as a list. A path runs as is, except a .js script (a checkout's bin/tskernel.js, or what
# node_modules/.bin/tskernel links to), which runs under Node, so that no executable bit or shebang matters.
# The compiled CLI beside the script becomes a dependency of every generation step: a new tskernel
# (npm update, or npm run build in a checkout) regenerates the kernels.
set(TSKERNEL_COMMAND "")
set(TSKERNEL_CLI_DEPENDS "")
if(EXISTS "${TSKERNEL_EXECUTABLE}" AND NOT IS_DIRECTORY "${TSKERNEL_EXECUTABLE}")
  get_filename_component(_tskernel_script "${TSKERNEL_EXECUTABLE}" REALPATH)
  if(_tskernel_script MATCHES "\\.m?js$")
    find_program(NODE_EXECUTABLE node)
    if(NOT NODE_EXECUTABLE)
      message(FATAL_ERROR "tskernel: Node.js (node) was not found on PATH; the tskernel CLI (${_tskernel_script}) needs it. "
        "Set -DNODE_EXECUTABLE=/path/to/node.")
    endif()
    set(TSKERNEL_COMMAND "${NODE_EXECUTABLE}" "${_tskernel_script}")
    get_filename_component(_tskernel_package "${_tskernel_script}" DIRECTORY)
    get_filename_component(_tskernel_package "${_tskernel_package}" DIRECTORY)
    if(EXISTS "${_tskernel_package}/dist/cli/main.js")
      set(TSKERNEL_CLI_DEPENDS "${_tskernel_package}/dist/cli/main.js")
    endif()
  else()
    set(TSKERNEL_COMMAND "${TSKERNEL_EXECUTABLE}")
  endif()
else()
  separate_arguments(TSKERNEL_COMMAND UNIX_COMMAND "${TSKERNEL_EXECUTABLE}")
  list(GET TSKERNEL_COMMAND 0 _tskernel_program)
  if(_tskernel_program MATCHES "/" AND NOT EXISTS "${_tskernel_program}")
    message(FATAL_ERROR "tskernel: TSKERNEL_EXECUTABLE names ${_tskernel_program}, which does not exist. "
      "Set it to the tskernel CLI (node_modules/.bin/tskernel in a project that installed tskernel), or to '' to search.")
  endif()
endif()

# Run it once now, so that a missing or broken CLI (a checkout without `npm run build`, a wrong path) stops
# the configure step with its own message instead of failing in the middle of a build.
execute_process(
  COMMAND ${TSKERNEL_COMMAND} --version
  WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
  RESULT_VARIABLE _tskernel_status
  OUTPUT_VARIABLE TSKERNEL_VERSION
  ERROR_VARIABLE _tskernel_error
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _tskernel_status STREQUAL "0")
  string(REPLACE ";" " " _tskernel_shown "${TSKERNEL_COMMAND}")
  set(_tskernel_hint "")
  if(_tskernel_error MATCHES "dist/cli/main\\.js")
    set(_tskernel_hint "\nThis looks like a tskernel checkout without its build: run `npm ci && npm run build` there.")
  endif()
  string(STRIP "${_tskernel_error}" _tskernel_error)
  message(FATAL_ERROR "tskernel: `${_tskernel_shown} --version` failed (${_tskernel_status}):\n${_tskernel_error}${_tskernel_hint}\n"
    "Set TSKERNEL_EXECUTABLE to a working tskernel CLI (now '${TSKERNEL_EXECUTABLE}'), or to '' to search.")
endif()
string(REPLACE ";" " " _tskernel_shown "${TSKERNEL_COMMAND}")
message(STATUS "tskernel ${TSKERNEL_VERSION}: ${_tskernel_shown}")

# tskernel_add_cuda_kernels(<target> <kernel.ts>... [DEFINES NAME=VALUE...])
#
# For each kernel file, a custom command runs `tskernel build <file> --target cuda` into
# <binary dir>/tskernel/<name>/ (its own folder, since each build also writes a manifest.json there), and
# <name>.cu and <name>.cuh become sources of <target>, with that folder on its include path: sources of the
# target `#include "<name>.cuh"` and call its launch_<kernel>() functions. The command depends on its .ts file,
# so editing a kernel regenerates that kernel only, then recompiles what uses it. A file none of whose kernels
# is for CUDA (their `targets` option leaves "cuda" out) stops the build at its generation step, naming the file
# and each kernel's targets. It runs in the current
# source folder with the path relative to it, so the #line directives in the .cu (and nvcc's messages about
# kernel code) name the TypeScript file as the project sees it. DEFINES become --define options (values
# of the kernels' compile-time constants).
function(tskernel_add_cuda_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "DEFINES")
  if(NOT arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tskernel_add_cuda_kernels(${target}): no kernel files given")
  endif()
  set(defines "")
  foreach(define IN LISTS arg_DEFINES)
    list(APPEND defines --define "${define}")
  endforeach()
  foreach(kernel IN LISTS arg_UNPARSED_ARGUMENTS)
    get_filename_component(source "${kernel}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${source}")
      message(FATAL_ERROR "tskernel_add_cuda_kernels(${target}): ${source} does not exist")
    endif()
    file(RELATIVE_PATH relative "${CMAKE_CURRENT_SOURCE_DIR}" "${source}")
    get_filename_component(name "${source}" NAME)
    string(REGEX REPLACE "\\.[cm]?tsx?$" "" name "${name}")
    set(out "${CMAKE_CURRENT_BINARY_DIR}/tskernel/${name}")
    # The previous outputs go first: tskernel build never deletes, so a file that no longer has CUDA kernels
    # would otherwise leave a stale .cu behind; then the check (this file as a script) says why none came.
    add_custom_command(
      OUTPUT "${out}/${name}.cu" "${out}/${name}.cuh"
      COMMAND "${CMAKE_COMMAND}" -E rm -f "${out}/${name}.cu" "${out}/${name}.cuh"
      COMMAND ${TSKERNEL_COMMAND} build "${relative}" --target cuda ${defines} --out "${out}"
      COMMAND "${CMAKE_COMMAND}" "-DTSKERNEL_CHECK_OUT=${out}" "-DTSKERNEL_CHECK_NAME=${name}"
        "-DTSKERNEL_CHECK_FILE=${relative}" "-DTSKERNEL_CHECK_TARGET=${target}" -P "${_TSKERNEL_MODULE_FILE}"
      DEPENDS "${source}" ${TSKERNEL_CLI_DEPENDS}
      WORKING_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}"
      COMMENT "tskernel: generating CUDA C from ${relative}"
      VERBATIM)
    target_sources(${target} PRIVATE "${out}/${name}.cu" "${out}/${name}.cuh")
    target_include_directories(${target} PRIVATE "${out}")
  endforeach()
endfunction()
