# Install rules for what is not a compiled target: systemd units, sysusers, the default
# configuration, man pages (gzipped at build time) and docs. The binaries install themselves
# (daemon/ and cli/ CMakeLists: wsindexd -> sbin, wsctl -> bin). Paths are relative to the
# prefix (/usr in the package) except /etc, which is absolute so that a /usr prefix does not
# put the configuration in /usr/etc. Included from the root CMakeLists.txt; cpack.cmake next.
include(GNUInstallDirs)

set(WSINDEX_SYSTEMD_SYSTEM_UNIT_DIR "lib/systemd/system" CACHE STRING
    "systemd system units, relative to the prefix (Debian 12: /usr/lib/systemd/system)")
set(WSINDEX_SYSTEMD_USER_UNIT_DIR "lib/systemd/user" CACHE STRING
    "systemd user units, relative to the prefix")
set(WSINDEX_SYSUSERS_DIR "lib/sysusers.d" CACHE STRING "sysusers.d, relative to the prefix")
set(WSINDEX_SYSCONF_DIR "/etc" CACHE PATH "Where wsindexd.conf goes (absolute)")

install(FILES ${PROJECT_SOURCE_DIR}/systemd/wsindexd.service ${PROJECT_SOURCE_DIR}/systemd/wsindexd.socket
        DESTINATION ${WSINDEX_SYSTEMD_SYSTEM_UNIT_DIR} COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/systemd/user/wsindexd.service
              ${PROJECT_SOURCE_DIR}/systemd/user/wsindexd.socket
        DESTINATION ${WSINDEX_SYSTEMD_USER_UNIT_DIR} COMPONENT runtime)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/systemd/user/user-config
        DESTINATION lib/wsindexd COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/systemd/wsindexd.sysusers
        DESTINATION ${WSINDEX_SYSUSERS_DIR} RENAME wsindexd.conf COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/wsindexd.conf
        DESTINATION ${WSINDEX_SYSCONF_DIR} COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/docs/security.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime OPTIONAL)

# Man pages: gzip -9n (no name, no timestamp: reproducible), as Debian policy wants them.
find_program(WSINDEX_GZIP gzip)
set(_wsindex_man_pages wsctl.1 wsindexd.8 wsindexd.conf.5)
set(_wsindex_man_outputs)
foreach(page IN LISTS _wsindex_man_pages)
    set(src ${PROJECT_SOURCE_DIR}/packaging/man/${page})
    set(out ${PROJECT_BINARY_DIR}/man/${page}.gz)
    string(REGEX REPLACE "^.*\\.([0-9])$" "\\1" section ${page})
    if(WSINDEX_GZIP)
        add_custom_command(OUTPUT ${out}
            COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/man
            COMMAND ${WSINDEX_GZIP} -9nc ${src} > ${out}
            DEPENDS ${src} VERBATIM)
        list(APPEND _wsindex_man_outputs ${out})
        install(FILES ${out} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT runtime)
    else()
        install(FILES ${src} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section} COMPONENT runtime)
    endif()
endforeach()
if(_wsindex_man_outputs)
    add_custom_target(wsindex_man ALL DEPENDS ${_wsindex_man_outputs})
endif()

# Unit checks and the package test (tests/packaging), only where tests are built.
if(WSINDEX_BUILD_TESTS AND EXISTS ${PROJECT_SOURCE_DIR}/tests/packaging/CMakeLists.txt)
    add_subdirectory(${PROJECT_SOURCE_DIR}/tests/packaging ${PROJECT_BINARY_DIR}/tests/packaging)
endif()

include(${CMAKE_CURRENT_LIST_DIR}/cpack.cmake OPTIONAL)
