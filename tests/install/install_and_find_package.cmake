# Driven by the install_and_find_package test (see CMakeLists.txt beside this file).
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(f lib/cmake/ranc/ranc-config.cmake lib/cmake/ranc/ranc-config-version.cmake
          include/ranc/session.h include/ranc/dsl.h bin/ranc)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "the install tree has no ${f}")
  endif()
endforeach()
# Nothing from the source tree: the project sees only the prefix.
run(${CMAKE_COMMAND} -S "${APP_DIR}" -B "${WORK_DIR}/app" -G "${GENERATOR}"
    -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${prefix}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/app")
run("${WORK_DIR}/app/ranc_app")
