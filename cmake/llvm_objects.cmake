# tilefuse_llvm_objects(NAME SOURCES...): library sources that include LLVM headers
# (llvm::json, llvm::SHA256, the thread pool). They get LLVM's include directories and
# definitions while the rest of libtilefuse does not; LLVM itself is linked statically
# by backend/nvptx and hidden from the exported symbols there.
function(tilefuse_llvm_objects name)
  add_library(${name} OBJECT ${ARGN})
  target_compile_features(${name} PRIVATE cxx_std_20)
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${name} PRIVATE $<TARGET_PROPERTY:tilefuse,INTERFACE_INCLUDE_DIRECTORIES>)
  target_include_directories(${name} SYSTEM PRIVATE ${LLVM_INCLUDE_DIRS})
  separate_arguments(defs NATIVE_COMMAND "${LLVM_DEFINITIONS}")
  target_compile_options(${name} PRIVATE ${defs} -Wall -Wextra -Wno-unused-parameter)
  target_sources(tilefuse PRIVATE $<TARGET_OBJECTS:${name}>)
endfunction()
