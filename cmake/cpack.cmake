# CPack: the Debian package (DEB generator) built from the install rules; scripts/package runs it.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "wsindexd")
set(CPACK_PACKAGE_VENDOR "wsindexd developers")
set(CPACK_PACKAGE_CONTACT "wsindexd developers <wsindexd@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "parallel file-system indexing daemon with a locate-like client")
set(CPACK_PACKAGE_DESCRIPTION
    "wsindexd walks directory trees in parallel into an SQLite index and answers name and size
queries over a Unix socket, filtered by what each caller may see. wsctl is its client.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # wsindexd_0.1.0-1_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION "utils")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
# Library dependencies come from dpkg-shlibdeps (dpkg-dev); without it, the list by hand.
find_program(WSINDEX_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(WSINDEX_DPKG_SHLIBDEPS)
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
    # The user is created by systemd-sysusers, or adduser where systemd is absent.
    set(CPACK_DEBIAN_PACKAGE_DEPENDS "systemd | systemd-standalone-sysusers | adduser")
else()
    set(CPACK_DEBIAN_PACKAGE_DEPENDS
        "libc6 (>= 2.34), libstdc++6 (>= 12), libgcc-s1, libsqlite3-0 (>= 3.35), libsystemd0, libacl1, libspdlog1.10, libfmt9, libncursesw6, libtinfo6, libpq5, systemd | systemd-standalone-sysusers | adduser")
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "systemd")
# postinst/prerm/postrm, and /etc/wsindexd.conf as a conffile (kept across upgrades; dpkg asks
# before replacing a locally edited one).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/debian/postinst
    ${PROJECT_SOURCE_DIR}/packaging/debian/prerm
    ${PROJECT_SOURCE_DIR}/packaging/debian/postrm
    ${PROJECT_SOURCE_DIR}/packaging/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# cpack (and make install) would first build every target, tests included; the package needs
# only wsindexd, wsctl and the man pages, which scripts/package builds itself.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

include(CPack)
