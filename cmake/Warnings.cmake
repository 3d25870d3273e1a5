# One warning set for every target of ours; -Werror only where CI asks for it, so a newer
# compiler's new warning never stops a user's build.
function(unwindkit_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                         -Wno-sign-conversion -Wnon-virtual-dtor -Wimplicit-fallthrough)
  if(UNWINDKIT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
