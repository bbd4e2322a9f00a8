# Runs one golden test (cmake -P). Variables:
#   DLC, FILECHECK   the programs
#   MODE             opt: `dlc opt INPUT --passes P | FileCheck INPUT`, P from a line `// PASSES: P`
#                    error: `dlc opt INPUT --passes P` must fail; its stderr is FileCheck'ed against INPUT
#                    import: `dlc inspect --ir INPUT --disable-pass fusion | FileCheck CHECK_FILE`
#   INPUT, CHECK_FILE, WORK_DIR (scratch space for the error mode)
cmake_minimum_required(VERSION 3.25)

set(dlc_args)
if(MODE STREQUAL "opt" OR MODE STREQUAL "error")
  file(STRINGS "${INPUT}" passes_line REGEX "^// PASSES:" LIMIT_COUNT 1)
  string(REGEX REPLACE "^// PASSES:[ \t]*" "" passes "${passes_line}")
  string(STRIP "${passes}" passes)
  set(dlc_args opt "${INPUT}")
  if(passes)
    list(APPEND dlc_args --passes "${passes}")
  endif()
  set(CHECK_FILE "${INPUT}")
elseif(MODE STREQUAL "import")
  # The import as canonicalized, before fusion rewrites the elementwise chains.
  set(dlc_args inspect --ir "${INPUT}" --disable-pass fusion)
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()

if(MODE STREQUAL "error")
  file(MAKE_DIRECTORY "${WORK_DIR}")
  get_filename_component(stem "${INPUT}" NAME_WE)
  set(stderr_file "${WORK_DIR}/${stem}.stderr")
  execute_process(COMMAND "${DLC}" ${dlc_args} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_FILE "${stderr_file}")
  if(rc EQUAL 0)
    message(FATAL_ERROR "dlc ${dlc_args} succeeded but an error was expected")
  endif()
  execute_process(COMMAND "${FILECHECK}" "${CHECK_FILE}" "--input-file=${stderr_file}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "FileCheck ${CHECK_FILE} failed on the error output")
  endif()
  return()
endif()

execute_process(COMMAND "${DLC}" ${dlc_args} COMMAND "${FILECHECK}" "${CHECK_FILE}" RESULTS_VARIABLE rcs)
list(GET rcs 0 dlc_rc)
list(GET rcs 1 check_rc)
if(NOT dlc_rc EQUAL 0)
  message(FATAL_ERROR "dlc ${dlc_args} failed (exit ${dlc_rc})")
endif()
if(NOT check_rc EQUAL 0)
  message(FATAL_ERROR "FileCheck ${CHECK_FILE} failed")
endif()
