# Installation and the CMake package, so an application can use an installed ranc:
#
#   find_package(ranc 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE ranc::ranc)
#
# ranc::ranc is everything (the DSL, .ra front end, checker, code generator, GPU
# runtime, sessions and the CSV/.tbl/.rcol readers); the parts are exported too:
# ranc::data, ranc::io, ranc::ir, ranc::ra_ops, ranc::compiler, ranc::runtime,
# ranc::templates, ranc::session. The libraries are static; the package finds
# their dependencies (the CUDA toolkit's NVRTC and static runtime, fmt, Threads).
# The public headers are those under include/ranc (see README, "Embedding").
include(CMakePackageConfigHelpers)

set(RANC_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/ranc")

# One target for users: everything.
add_library(ranc_all INTERFACE)
target_link_libraries(ranc_all INTERFACE ranc_session ranc_compiler ranc_runtime ranc_io)
set_target_properties(ranc_all PROPERTIES EXPORT_NAME ranc)

set(RANC_EXPORTED_LIBS ranc_data ranc_io ranc_ir ranc_ra_ops ranc_compiler ranc_runtime
                       ranc_templates ranc_session)
foreach(t IN LISTS RANC_EXPORTED_LIBS)
  string(REGEX REPLACE "^ranc_" "" short "${t}")
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${short})
endforeach()

install(TARGETS ${RANC_EXPORTED_LIBS} ranc_all
  EXPORT ranc-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ranc RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Public headers: the ranc/ trees of each component (no src/ header is needed).
foreach(dir runtime/include compiler/include ra_ops/include templates/include)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/${dir}/" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.cuh")
endforeach()

install(EXPORT ranc-targets NAMESPACE ranc:: DESTINATION ${RANC_INSTALL_CMAKEDIR}
        FILE ranc-targets.cmake)
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/ranc-config.cmake.in"
  "${PROJECT_BINARY_DIR}/ranc-config.cmake" INSTALL_DESTINATION ${RANC_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the API, so only the same minor version matches.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/ranc-config-version.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/ranc-config.cmake"
              "${PROJECT_BINARY_DIR}/ranc-config-version.cmake"
        DESTINATION ${RANC_INSTALL_CMAKEDIR})
