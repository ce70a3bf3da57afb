# Installation beyond the binaries (bin/callpath and lib/callpath/libcallpath-rt.so are
# installed by their own folders): man pages generated from docs/, the documentation, and
# the Debian package (`cpack -G DEB` in the build directory).

# Man pages: docs/callpath.md -> callpath.1, docs/cmd-NAME.md -> callpath-NAME.1. Their
# one-line NAME descriptions come from `callpath --help` (the command table in src/cli).
option(CALLPATH_MAN "Generate and install man pages from docs/ (needs python3)" ON)
if(CALLPATH_MAN)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  set(CP_MAN_DIR ${CMAKE_BINARY_DIR}/man)
  set(CP_MD2MAN ${CMAKE_SOURCE_DIR}/scripts/md2man.py)
  file(GLOB CP_CMD_DOCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/cmd-*.md)
  set(CP_MAN_SOURCES ${CMAKE_SOURCE_DIR}/docs/callpath.md ${CP_CMD_DOCS})
  set(CP_MAN_PAGES "")
  foreach(md ${CP_MAN_SOURCES})
    get_filename_component(base ${md} NAME_WE)
    string(REGEX REPLACE "^cmd-" "callpath-" page ${base})
    list(APPEND CP_MAN_PAGES ${page})
  endforeach()

  add_custom_command(OUTPUT ${CP_MAN_DIR}/callpath-help.txt
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CP_MAN_DIR}
    COMMAND $<TARGET_FILE:callpath> --help > ${CP_MAN_DIR}/callpath-help.txt
    DEPENDS callpath VERBATIM)
  set(CP_MAN_OUTPUTS "")
  foreach(md ${CP_MAN_SOURCES})
    get_filename_component(base ${md} NAME_WE)
    string(REGEX REPLACE "^cmd-" "callpath-" page ${base})
    add_custom_command(OUTPUT ${CP_MAN_DIR}/${page}.1 ${CP_MAN_DIR}/${page}.1.gz
      COMMAND ${Python3_EXECUTABLE} ${CP_MD2MAN} --name ${page} --version ${PROJECT_VERSION}
              --help-text ${CP_MAN_DIR}/callpath-help.txt --see-also ${CP_MAN_PAGES}
              -- ${md} ${CP_MAN_DIR}/${page}.1
      # Debian installs man pages compressed, reproducibly (no name or time stamp).
      COMMAND gzip -9nf -k ${CP_MAN_DIR}/${page}.1
      DEPENDS ${md} ${CP_MD2MAN} ${CP_MAN_DIR}/callpath-help.txt VERBATIM)
    list(APPEND CP_MAN_OUTPUTS ${CP_MAN_DIR}/${page}.1.gz)
  endforeach()
  add_custom_target(man ALL DEPENDS ${CP_MAN_OUTPUTS})
  install(FILES ${CP_MAN_OUTPUTS} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md")

# The .deb: Depends computed by dpkg-shlibdeps from the installed binaries.
set(CALLPATH_MAINTAINER "callpath developers <callpath@localhost>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME callpath)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "call-path profiler for native Linux programs")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
  "callpath measures unmodified, optimized C, C++ and Fortran programs (serial,\n"
  "threaded, OpenMP, MPI) and attributes every cost to its full calling context,\n"
  "down to loops, inlined code and source lines: sampling (record), selective\n"
  "instrumentation (probe, gprof), a profile database (analyze), views (report)\n"
  "and exports for other tools (export).")
set(CPACK_PACKAGE_CONTACT ${CALLPATH_MAINTAINER})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS OFF)
set(CPACK_STRIP_FILES ON)
include(CPack)
