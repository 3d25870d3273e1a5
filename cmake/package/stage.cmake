# Run by cpack (CPACK_PRE_BUILD_SCRIPTS) on the staged package root, before it is archived.
# CPack passes its own variables (CPACK_*) and those set in Package.cmake with a CPACK_ name.
set(root ${CPACK_TEMPORARY_INSTALL_DIRECTORY})
file(WRITE ${root}/etc/gdb/gdbinit.d/unwindkit.gdb
     "# unwindkit: every GDB session unwinds with SFrame tables (gdb -nx skips this file).\n"
     "source ${CPACK_UNWINDKIT_GDB_PLUGIN}\n")

# The man page: help2man turns the staged binary's --help and --version into unwindkit(1).
find_program(HELP2MAN help2man REQUIRED)
find_program(GZIP gzip REQUIRED)
set(man ${root}${CPACK_PACKAGING_INSTALL_PREFIX}/share/man/man1/unwindkit.1)
file(MAKE_DIRECTORY ${root}${CPACK_PACKAGING_INSTALL_PREFIX}/share/man/man1)
execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr
                        --name "${CPACK_PACKAGE_DESCRIPTION_SUMMARY}" --output ${man}
                        ${root}${CPACK_PACKAGING_INSTALL_PREFIX}/bin/unwindkit
                COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${GZIP} -9n ${man} COMMAND_ERROR_IS_FATAL ANY)

# A native package's changelog, in Debian's format (policy 4.4): one entry for the packaged
# version, dated now (or SOURCE_DATE_EPOCH, for a reproducible package).
set(changelog ${root}${CPACK_PACKAGING_INSTALL_PREFIX}/share/doc/unwindkit/changelog)
string(TIMESTAMP date "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE ${changelog}
     "unwindkit (${CPACK_PACKAGE_VERSION}) unstable; urgency=medium\n\n"
     "  * Packaged by scripts/package.\n\n"
     " -- ${CPACK_PACKAGE_CONTACT}  ${date}\n")
execute_process(COMMAND ${GZIP} -9n ${changelog} COMMAND_ERROR_IS_FATAL ANY)
