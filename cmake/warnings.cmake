# Warnings live on an INTERFACE target that every project target links privately, so they never
# leak to consumers and packagers are never forced into -Werror.
add_library(wsindex_warnings INTERFACE)
add_library(wsindex::warnings ALIAS wsindex_warnings)
target_compile_options(wsindex_warnings INTERFACE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
    -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough
    $<$<BOOL:${WSINDEX_WERROR}>:-Werror>)
