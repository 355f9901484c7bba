# Compiles one source with -fsyntax-only and checks the outcome.
#   -DCOMPILER=<c++>  -DSOURCE=<file.cpp>  -DINCLUDES=<dir|dir|...>  -DIMPLICIT=<dir|dir|...>
#   -DEXPECT_FAIL=ON|OFF
# EXPECT_FAIL=ON passes only if compilation fails, the output contains the text after
# "// expect: " in the source, and the output names the source file at the line
# marked "// <- error" (the user's offending line, e.g. "store_without_cast.cpp:9:").
# EXPECT_FAIL=OFF (the control) passes only if compilation succeeds.
cmake_minimum_required(VERSION 3.25)

foreach(var COMPILER SOURCE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_compile_fail.cmake: -D${var}=... is required")
  endif()
endforeach()

get_filename_component(name "${SOURCE}" NAME)
file(STRINGS "${SOURCE}" lines)

# The expected message and the offending line.
set(expect "")
set(error_line "")
set(n 0)
foreach(line IN LISTS lines)
  math(EXPR n "${n} + 1")
  if(line MATCHES "// expect: (.*)$" AND expect STREQUAL "")
    set(expect "${CMAKE_MATCH_1}")
  endif()
  if(line MATCHES "// <- error")
    set(error_line ${n})
  endif()
endforeach()
if(expect STREQUAL "")
  message(FATAL_ERROR "${name}: no '// expect: <text>' comment")
endif()
if(EXPECT_FAIL AND error_line STREQUAL "")
  message(FATAL_ERROR "${name}: no line marked '// <- error'")
endif()

# Include directories (| separated; the compiler's own system directories are dropped,
# since -I on them breaks #include_next in the standard library).
string(REPLACE "|" ";" includes "${INCLUDES}")
string(REPLACE "|" ";" implicit "${IMPLICIT}")
set(flags -std=c++20 -fsyntax-only)
foreach(dir IN LISTS includes)
  if(dir STREQUAL "" OR dir IN_LIST implicit)
    continue()
  endif()
  list(APPEND flags "-I${dir}")
endforeach()

execute_process(
  COMMAND "${COMPILER}" ${flags} "${SOURCE}"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out)

if(NOT EXPECT_FAIL)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} must compile but failed:\n${out}")
  endif()
  message(STATUS "${name}: compiles, as expected")
  return()
endif()

if(rc EQUAL 0)
  message(FATAL_ERROR "${name} compiled, but it must fail with: ${expect}")
endif()
string(FIND "${out}" "${expect}" at_text)
if(at_text EQUAL -1)
  message(FATAL_ERROR "${name}: the compiler output lacks the expected text\n  \"${expect}\"\n"
                      "output:\n${out}")
endif()
string(FIND "${out}" "${name}:${error_line}:" at_line)
if(at_line EQUAL -1)
  message(FATAL_ERROR "${name}: the compiler output does not point at the offending line ${name}:${error_line}\n"
                      "output:\n${out}")
endif()
message(STATUS "${name}: fails with \"${expect}\" at ${name}:${error_line}, as expected")
