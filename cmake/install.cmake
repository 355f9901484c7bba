# cmake --install gives a package usable through find_package(tilefuse).
include(CMakePackageConfigHelpers)
install(TARGETS tilefuse EXPORT tilefuseTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(dir include dsl/include backend/interp/include backend/nvptx/include backend/cuda/include
            autotune/include kernels/include python/include)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${dir}/tilefuse)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/tilefuse DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endforeach()
install(EXPORT tilefuseTargets NAMESPACE tilefuse:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilefuse)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tilefuseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tilefuseConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilefuse)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tilefuseConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tilefuseConfig.cmake ${PROJECT_BINARY_DIR}/tilefuseConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tilefuse)
