# tilefuse_find_nanobind(): finds Python and nanobind (pip install nanobind) and sets
# TILEFUSE_HAVE_NANOBIND, and TILEFUSE_HAVE_PYTEST when pytest and numpy import too.
# Without nanobind the Python package and its sample are skipped; without pytest, their tests.
# A macro: Python_EXECUTABLE and the nanobind functions must reach the caller's scope.
macro(tilefuse_find_nanobind)
  set(TILEFUSE_HAVE_NANOBIND OFF)
  set(TILEFUSE_HAVE_PYTEST OFF)
  find_package(Python 3.9 COMPONENTS Interpreter Development.Module)
  if(NOT Python_FOUND)
    message(STATUS "tilefuse: no Python development files; the Python package is skipped")
  else()
    execute_process(COMMAND ${Python_EXECUTABLE} -m nanobind --cmake_dir
                    OUTPUT_VARIABLE tilefuse_nb_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE tilefuse_nb_rc ERROR_QUIET)
    if(tilefuse_nb_rc EQUAL 0)
      find_package(nanobind CONFIG REQUIRED HINTS ${tilefuse_nb_dir})
      set(TILEFUSE_HAVE_NANOBIND ON)
      execute_process(COMMAND ${Python_EXECUTABLE} -c "import pytest, numpy"
                      RESULT_VARIABLE tilefuse_pytest_rc OUTPUT_QUIET ERROR_QUIET)
      if(tilefuse_pytest_rc EQUAL 0)
        set(TILEFUSE_HAVE_PYTEST ON)
      else()
        message(STATUS "tilefuse: pytest or numpy missing for ${Python_EXECUTABLE}; the Python tests are skipped")
      endif()
    else()
      message(STATUS "tilefuse: nanobind not found for ${Python_EXECUTABLE} (pip install nanobind); "
                     "the Python package is skipped")
    endif()
  endif()
endmacro()
