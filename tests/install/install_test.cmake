# cmake -DTILEFUSE_BUILD_DIR=... -DCONSUMER_SOURCE_DIR=... -DWORK_DIR=... -DGENERATOR=...
#       -DCXX_COMPILER=... -P install_test.cmake
# Installs the build into WORK_DIR/prefix, then configures, builds and runs the consumer
# project against that prefix only.
cmake_minimum_required(VERSION 3.25)
foreach(v TILEFUSE_BUILD_DIR CONSUMER_SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "install_test.cmake: -D${v}=... is required")
  endif()
endforeach()

# Runs one step; on failure prints its output and stops with the step's name.
function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: ${name} failed (${rc}):\n${out}")
  endif()
  message(STATUS "install test: ${name}: ok")
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})

step("cmake --install" ${CMAKE_COMMAND} --install ${TILEFUSE_BUILD_DIR} --prefix ${prefix})
# Debug: the consumer is one small translation unit; -O0 compiles fastest.
step("configure the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
     -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Debug -DCMAKE_PREFIX_PATH=${prefix}
     -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
step("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
step("run the consumer" ${WORK_DIR}/build/consumer)
message("${step_output}")

# The consumer must have linked the installed library, not the build tree's.
step("ldd" ldd ${WORK_DIR}/build/consumer)
string(REGEX MATCH "libtilefuse[^\n]*" line "${step_output}")
if(NOT line MATCHES "${prefix}/")
  message(FATAL_ERROR "install test: the consumer did not load libtilefuse from ${prefix}: ${line}")
endif()
message(STATUS "install test: ${line}")
