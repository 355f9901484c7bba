# Runs EXE with "softmax --bogus" and requires exit status WANT_STATUS and WANT_ERR on stderr.
execute_process(COMMAND ${EXE} softmax --bogus RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL WANT_STATUS)
  message(FATAL_ERROR "exit status ${status}, expected ${WANT_STATUS}; stderr: ${err}")
endif()
string(FIND "${err}" "${WANT_ERR}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "stderr lacks '${WANT_ERR}': ${err}")
endif()
