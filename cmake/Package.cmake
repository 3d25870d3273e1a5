# The Debian package (scripts/package runs cpack): the CLI in /usr/bin, the plugins where they
# install (UNWINDKIT_*_INSTALL_DIR), the docs, a man page, and /etc/gdb/gdbinit.d/unwindkit.gdb
# so that every GDB session loads the plugin (`gdb -nx` still skips it).
install(FILES README.md DESTINATION share/doc/unwindkit)
install(DIRECTORY docs/ DESTINATION share/doc/unwindkit)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME unwindkit)
set(CPACK_PACKAGE_VENDOR unwindkit)
set(CPACK_PACKAGE_CONTACT
    "unwindkit maintainers <maintainers@users.noreply.a-seed-ba9fbec3.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "SFrame, compact unwind, .trace and CBF stack tables for GDB and LLDB")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "Reads, checks and dumps compact stack-unwinding formats (SFrame,\n"
    "Apple compact unwind, Intel .trace, Swift CBF) and unwinds with them. It ships\n"
    "a command-line tool and plugins that make GDB and LLDB unwind stripped programs\n"
    "through these tables.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Shared-library dependencies (libdw1, libfmt9, ...) come from dpkg-shlibdeps on
# the binaries; the GDB extension needs the debuggers' Python, which it does not link.
# Capstone is loaded on first use (core/deferred/), so no binary lists it in DT_NEEDED and
# dpkg-shlibdeps cannot see it: its package is the one that holds the library this build
# loads.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
unwindkit_soname(PkgConfig::CAPSTONE capstone capstone_soname capstone_path)
execute_process(COMMAND dpkg-query -S ${capstone_path} OUTPUT_VARIABLE capstone_owner
                COMMAND_ERROR_IS_FATAL ANY)
string(REGEX MATCH "^[^:]+" capstone_package "${capstone_owner}")
# The LLDB plugin links no liblldb (lldb-plugin/CMakeLists.txt): it works in whichever of the
# release's LLDBs loads it, so they are recommended, not depended on.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libpython${UNWINDKIT_PYTHON_VERSION}, ${capstone_package}")
list(TRANSFORM UNWINDKIT_LLDB_VERSIONS PREPEND "lldb-" OUTPUT_VARIABLE lldb_packages)
list(JOIN lldb_packages " | " lldb_packages)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gdb | gdb-multiarch, ${lldb_packages}")
# postinst/prerm: the GDB plugin's bytecode, made and removed on the installed system.
set(UNWINDKIT_GDB_DIR ${CPACK_PACKAGING_INSTALL_PREFIX}/${UNWINDKIT_GDB_INSTALL_DIR})
foreach(script postinst prerm)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/package/${script}.in
                 ${CMAKE_CURRENT_BINARY_DIR}/package/${script} @ONLY
                 FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                                  WORLD_READ WORLD_EXECUTE)
endforeach()
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/package/conffiles
    ${CMAKE_CURRENT_BINARY_DIR}/package/postinst ${CMAKE_CURRENT_BINARY_DIR}/package/prerm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# After the install into the staging root and before the archive: the gdbinit.d file (its
# path names the package's prefix, not the build's), the man page made from the staged
# binary's --help, and the changelog Debian wants of a native package.
set(CPACK_UNWINDKIT_GDB_PLUGIN ${UNWINDKIT_GDB_DIR}/unwindkit-gdb.py)
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/package/stage.cmake)
include(CPack)
